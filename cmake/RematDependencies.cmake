# Every dependency comes from Debian bookworm's packages; see scripts/install-deps.sh.
find_package(LLVM 14 REQUIRED CONFIG)
find_package(absl REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(Eigen3 REQUIRED CONFIG)

# LLVM's exported flags carry -fno-exceptions and -std=c++14; use only the include
# directories and definitions, never LLVM_CXXFLAGS.
add_library(remat_llvm INTERFACE)
target_include_directories(remat_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(remat_llvm INTERFACE LLVMSupport)

# COIN-OR CBC (the `ilp` planner's MILP solver) ships a pkg-config file but no CMake
# config.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CBC REQUIRED IMPORTED_TARGET cbc)
