// A deliberate call against the layers, for LayersTest.ACallOfALayerAboveFailsTheLinkCheck: a
// library that builds on memory/ calls lz::default_device(), which the frontend defines. Only that
// test builds it, and the build must fail.
#include "lazuli/device.h"

namespace lz::layer_probe {

Device device_of_new_buffers() { return default_device(); }

}  // namespace lz::layer_probe
