// The "cubin" of the emulation: the host shared object that the fake NVRTC compiled, carried
// inside the image itself (hex text ending in '\0'), so that an image stored by lazuli's disk
// cache still loads in a later process. The fake driver (cuModuleLoadData) recognizes it by its
// first line and rejects anything else, as a real driver rejects a foreign image.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lz::cuda_emulation {

/// The image (cubin and PTX alike) of the shared object `library`: text, '\0' included.
std::vector<char> encode_image(std::string_view library);

/// The shared object inside `image` (a NUL-terminated text), or nullopt for a foreign image.
std::optional<std::string> decode_image(const char* image);

}  // namespace lz::cuda_emulation
