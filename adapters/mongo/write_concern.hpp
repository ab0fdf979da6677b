// The write concern of the protocol's writes (claims, completions, renewals, releases, failures).
//
// The fence is a single-document compare-and-set. On a replica set, a write acknowledged by the
// primary alone can be rolled back after a failover, and a lease or a result "written" that way
// may vanish while another worker takes the document over (Jepsen's MongoDB analyses). So, when
// the URI names no `w`, the protocol writes with w:majority and journal:true; a URI that names a
// `w` is honoured (the user chose), except w=0, which acknowledges nothing: the matched counts the
// fence reports through would be missing, so it is refused at start.
#pragma once

#include <mongoc/mongoc.h>

#include <string>

namespace dibs::mongo {

struct write_concern_choice {
  std::string description;  // for the start log, e.g. "write concern w=majority, journal (the URI names no w)"
  bool majority = false;    // false: a failover may roll back acknowledged writes (warned about)
};

// Sets the write concern on `uri` (before the client pool is made from it) and says what is in
// force. Throws std::invalid_argument, naming the URI as `redacted`, for w=0.
write_concern_choice apply_write_concern(mongoc_uri_t* uri, const std::string& redacted);

}  // namespace dibs::mongo
