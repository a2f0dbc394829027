// One clone of a hot function per x86-64 level (x86-64-v4: AVX-512, v3: AVX2, and the baseline),
// picked by an ifunc resolver at load time: the runtime is built for baseline x86-64 (SSE2), whose
// 4-wide loops (and division) would otherwise run everywhere. Other targets compile it once.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SOD2_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SOD2_CPU_CLONES
#endif
