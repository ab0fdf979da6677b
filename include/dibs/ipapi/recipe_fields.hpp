// The fields of the recipe dibs began with, ip-api's: the address in `originatingIp`, its answer
// in `location`. They are every store's default source and target (so the demo, the stand-in and
// a table `dibs init` makes without source/target agree), named here once: an API of another
// shape is given its fields as source/target (or the options' source and target).
#pragma once

namespace dibs::ipapi {

inline constexpr const char* source_field = "originatingIp";
inline constexpr const char* target_field = "location";

}  // namespace dibs::ipapi
