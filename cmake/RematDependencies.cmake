# Every dependency comes from Debian bookworm's packages; see scripts/install-deps.sh.
find_package(LLVM 14 REQUIRED CONFIG)
find_package(absl REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(Eigen3 REQUIRED CONFIG)
# ONNX's package config names protobuf::libprotobuf without finding it.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)

# LLVM's exported flags carry -fno-exceptions and -std=c++14; use only the include
# directories and definitions, never LLVM_CXXFLAGS.
add_library(remat_llvm INTERFACE)
target_include_directories(remat_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(remat_llvm INTERFACE LLVMSupport)
