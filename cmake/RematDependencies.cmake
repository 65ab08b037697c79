# Every dependency comes from Debian bookworm's packages; see scripts/install-deps.sh.
find_package(LLVM 14 REQUIRED CONFIG)
find_package(absl REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(Eigen3 REQUIRED CONFIG)
# The schedule pass builds its candidate orders on two threads.
find_package(Threads REQUIRED)
# .npz archives. Debian's libzip-config.cmake also declares the zipcmp, zipmerge
# and ziptool programs, which libzip-dev does not ship, so it fails to load;
# pkg-config finds the library alone.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
# ONNX's package config names protobuf::libprotobuf without finding it.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)

# LLVM's exported flags carry -fno-exceptions and -std=c++14; use only the include
# directories and definitions, never LLVM_CXXFLAGS.
add_library(remat_llvm INTERFACE)
target_include_directories(remat_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(remat_llvm INTERFACE LLVMSupport)

# MPI is optional: without it the library and CLI build, and `remat run
# --distributed` says so (docs/multi-device.md).
find_package(MPI QUIET COMPONENTS CXX)
if(MPI_CXX_FOUND)
  set(REMAT_WITH_MPI ON)
else()
  set(REMAT_WITH_MPI OFF)
endif()
# COIN-OR CBC (the `ilp` planner's MILP solver) ships a pkg-config file but no CMake
# config.
pkg_check_modules(CBC REQUIRED IMPORTED_TARGET cbc)
# Boost.Graph (the `mincut` planner's max-flow), header-only.
find_package(Boost 1.74 REQUIRED)
