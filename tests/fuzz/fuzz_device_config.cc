// Configuration, Secret and ConfigMap files of `regatta devices apply`.

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/devices/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)regatta::devices::ParseResources(text);
  return 0;
}
