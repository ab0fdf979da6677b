// Plain-text log lines show control characters escaped: text from outside -- an API's message,
// a server's error -- can't start a forged line of its own or drive the terminal (ESC sequences).
// (JSON logs escape as JSON does.)
#pragma once

#include <string>
#include <string_view>

namespace dibs::log {

// `text` with C0 control characters, DEL and the C1 controls (U+0080..U+009F in UTF-8) written
// as visible escapes: \n \r \t, \x1b (ESC), \x7f, \u009b; everything else as it is.
std::string escape_controls(std::string_view text);

}  // namespace dibs::log
