// ASTRA-sim's system configuration file (`--system FILE`), mapped onto
// fabricsim's settings so ASTRA-sim users can run their own files.
#pragma once

#include <string>
#include <vector>

#include "platforms/platform_spec.h"

namespace fabricsim {

/// Applies the file to `spec`. Keys fabricsim does not model are listed in
/// `notes` (once each). Throws InputError naming the file and key.
void apply_astra_system(const std::string& path, PlatformSpec& spec, std::vector<std::string>& notes);

}  // namespace fabricsim
