// The one named logger of kerntune ("kerntune"). The library only logs through it; sinks and
// levels are configured by the application (the CLI does it in tools/).
#pragma once

#include <spdlog/spdlog.h>

namespace kt {

// Returns the "kerntune" logger, creating it with a stderr sink at level warn if the
// application registered none.
spdlog::logger& logger();

}  // namespace kt
