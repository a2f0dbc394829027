# Cross toolchain for arm64 (aarch64) Linux with Debian's g++-aarch64-linux-gnu and the :arm64
# multiarch packages (scripts/install-cross-deps.sh). Used by the arm64-linux preset:
#
#   cmake --preset arm64-linux && cmake --build build-arm64 --target run_package
#
# Libraries come from the multiarch directory /usr/lib/aarch64-linux-gnu (headers from /usr/include
# and /usr/include/aarch64-linux-gnu, shared with the host); programs such as protoc are the
# host's. Tests and try_run go through qemu-aarch64 (qemu-user) with the cross sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(SOD2_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${SOD2_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${SOD2_CROSS_TRIPLE}-g++)
# The multiarch subdirectory of lib/ (Debian layout): find_library and find_package look in
# /usr/lib/aarch64-linux-gnu, never in the host's /usr/lib/x86_64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE ${SOD2_CROSS_TRIPLE})

# /usr/aarch64-linux-gnu is the cross sysroot of libc (searched first); the multiarch packages
# live under /usr itself, so libraries, headers and packages are searched in both (BOTH), while
# programs are always the host's (protoc must run here).
set(CMAKE_FIND_ROOT_PATH /usr/${SOD2_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config reads the arm64 .pc files only (OpenBLAS, protobuf).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${SOD2_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Run arm64 binaries (ctest, try_run) under qemu-user; -L points it at the arm64 dynamic loader
# and libc for binaries that are not fully static.
find_program(SOD2_QEMU_AARCH64 qemu-aarch64)
if(SOD2_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SOD2_QEMU_AARCH64} -L /usr/${SOD2_CROSS_TRIPLE})
endif()
