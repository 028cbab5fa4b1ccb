# CMake toolchain file: link the project's executables with jitrun, which
# checks that they link and writes launchers that run them in memory (see
# README.md, "Build systems"). Shared and static libraries are made by the
# real tools as usual.
#
#   cmake -B build -G Ninja -DCMAKE_TOOLCHAIN_FILE=/path/to/jitrun/cmake/jitrun-launcher.cmake
#   cmake --build build && ctest --test-dir build
#
# -DJITRUN=/path/to/jitrun picks a jitrun other than the one on PATH; the
# launchers start it by its absolute path.
if(NOT JITRUN)
  find_program(JITRUN jitrun REQUIRED)
endif()
get_filename_component(JITRUN "${JITRUN}" ABSOLUTE)
set(JITRUN "${JITRUN}" CACHE FILEPATH "The jitrun that links executables" FORCE)
# The compiler checks' projects read this file again: they need the same jitrun.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES JITRUN)
foreach(lang C CXX)
  set(CMAKE_${lang}_LINK_EXECUTABLE
      "\"${JITRUN}\" --link-launcher <TARGET> <FLAGS> <CMAKE_${lang}_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> <LINK_LIBRARIES>")
endforeach()
