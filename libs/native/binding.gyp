{
  # The C core (src/*.c, C11, no Node headers) plus the node-addon-api glue.
  # One line per C file: adding an algorithm family is one line here.
  "targets": [
    {
      "target_name": "hashq",
      "sources": [
        "src/core.c",
        "src/registry.c",
        "src/state.c",
        "src/crc32c.c",
        "src/dispatch.c",
        "src/cpucycles.c",
        "src/sha1.c",
        "src/sha1_shani.c",
        "src/sha1_armv8.c",
        "src/sha256.c",
        "src/sha256_shani.c",
        "src/sha256_armv8.c",
        "src/sha512.c",
        "src/sha512_avx2.c",
        "src/keccak.c",
        "src/keccak_bmi.c",
        "src/keccak_avx512.c",
        "src/xoodyak.c",
        "src/ascon.c",
        "src/ascon_bmi.c",
        "src/esch.c",
        "src/romulush.c",
        "src/photon.c",
        "src/md5.c",
        "src/crc32.c",
        "src/crc32c_algo.c",
        "src/crc64nvme.c",
        "src/crc_clmul.c",
        "src/riscv_features.c",
        "src/keccak_rv64.c",
        "src/ascon_rv64.c",
        "src/file_io.c",
        "src/file_map.c",
        "src/socket_io.c",
        "binding/addon.cc",
        "binding/args.cc",
        "binding/async_queue.cc",
        "binding/feed.cc",
        "binding/hash_calls.cc",
        "binding/file_calls.cc"
      ],
      "conditions": [
        ["target_arch=='riscv64'", {"dependencies": ["hashq_rv64_zbb", "hashq_rv64_zknh"]}]
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "src"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS"
      ],
      # No -march: the binary must run on every CPU of its architecture;
      # ISA-specific code uses per-function target attributes + dispatch.
      "cflags": ["-O3", "-fvisibility=hidden"],
      # Every function with external linkage must be declared in a header
      # first (src/internal.h for the ISA variants), so the compiler checks
      # each definition against the declaration its callers see.
      "cflags_c": ["-std=c11", "-Wmissing-prototypes", "-Wredundant-decls"],
      "cflags_cc": ["-std=c++17"],
      # C++ exceptions stay off (node-gyp's default): the glue reports
      # errors through N-API (NAPI_DISABLE_CPP_EXCEPTIONS).
      # Node's common.gypi keeps frame pointers; the hash loops gain a register
      # without one.
      "cflags!": ["-O2", "-O1", "-O0", "-fno-omit-frame-pointer"],
      "xcode_settings": {
        "OTHER_CFLAGS": ["-O3", "-std=c11"],
        "OTHER_CPLUSPLUSFLAGS": ["-O3", "-std=c++17"],
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES"
      }
    }
  ],
  # riscv64: the Zbb and Zknh paths, each file built with its own -march
  # (GCC 12 has no per-function target attribute on riscv) and chosen at
  # load time; elsewhere they are not built.
  "conditions": [
    ["target_arch=='riscv64'", {
      "targets": [
        {
          "target_name": "hashq_rv64_zbb",
          "type": "static_library",
          "sources": ["src/keccak_zbb.c", "src/ascon_zbb.c", "src/sha2_zbb.c"],
          "include_dirs": ["src"],
          "cflags": ["-O3", "-fvisibility=hidden", "-fPIC", "-march=rv64gc_zbb"],
          "cflags_c": ["-std=c11"],
          "cflags!": ["-O2", "-O1", "-O0", "-fno-omit-frame-pointer"]
        },
        {
          "target_name": "hashq_rv64_zknh",
          "type": "static_library",
          "sources": ["src/sha2_zknh.c"],
          "include_dirs": ["src"],
          "cflags": ["-O3", "-fvisibility=hidden", "-fPIC", "-march=rv64gc_zbb_zknh"],
          "cflags_c": ["-std=c11"],
          "cflags!": ["-O2", "-O1", "-O0", "-fno-omit-frame-pointer"]
        }
      ]
    }]
  ]
}
