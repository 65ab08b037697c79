# Warnings, sanitizers and the compiler cache, applied to every project target.
find_program(REMAT_CCACHE ccache)
if(REMAT_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${REMAT_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${REMAT_CCACHE})
endif()

add_library(remat_warnings INTERFACE)
target_compile_options(remat_warnings INTERFACE
  -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

if(REMAT_SANITIZE)
  # -g1: line tables and function names, all the sanitizers' reports use.
  # Full debug info made the compiles 10-27% slower (measured on Graph.cpp,
  # Training.cpp, BudgetTest.cpp), in the build that takes most of CI.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -g1)
  add_link_options(-fsanitize=address,undefined)
  # Position-dependent executables: a PIE test binary spends half its start
  # applying 900,000 relocations, and the sanitized tests start thousands.
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
endif()

# Which linker to use: lld links the test binaries far faster than bfd.
find_program(REMAT_LLD ld.lld)
if(REMAT_LLD AND NOT REMAT_SANITIZE)
  add_link_options(-fuse-ld=lld)
endif()
