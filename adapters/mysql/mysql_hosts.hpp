// Which host of a mysql:// URI a new connection goes to, and when a worker moves on to another:
// pure functions (tests/unit/test_mysql_hosts.cpp). With one host nothing here changes anything:
// a lost server is reconnected to, as before. With several (a Galera cluster's nodes, each
// taking writes), a worker stays on the node it has while that node answers, and moves on when
// the node is gone (the connection lost or refused) or is no longer part of the cluster's
// primary component (error 1047, "WSREP has not yet prepared node for application use": a
// node cut off from the others, or one still catching up after a restart).
#pragma once

#include <string_view>

#include <cstddef>
#include <vector>

namespace dibs::mysql {

// The hosts a new connection tries, in turn: `current` first, then the ones after it in the
// URI's order, wrapping around; each once.
std::vector<std::size_t> connect_order(std::size_t hosts, std::size_t current);

// After a connection to host `failed` was lost or refused: the host the next connection tries
// first (the next one in the URI's order; the same with a single host).
std::size_t after_loss(std::size_t hosts, std::size_t failed);

// Whether a server error met while connecting (or on a connection) says that this host is no
// use now and another host of the URI may be (a lost or refused connection, a node outside the
// primary component), rather than something every host would answer the same (a wrong
// password, an unknown database, a missing right). 1047 counts only with Galera's words
// ("WSREP ..."): from any other server it is ER_UNKNOWN_COM_ERROR, the same on every host.
bool another_host_may_answer(unsigned error_code, std::string_view server_message);

// Whether an error that ended a claim's transaction is a claim conflict: another claimer took
// the rows first. On a Galera cluster two nodes that claim the same row learn it at commit, the
// later one's transaction failing certification (error 1213, as a deadlock); a lock wait that
// timed out (1205) is the single server's form of the same race. The claim is run again, and
// counted as a conflict, never as a store error.
bool is_claim_conflict(unsigned error_code);

}  // namespace dibs::mysql
