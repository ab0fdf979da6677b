// pg_store's blocking calls on its admin connection (pg_store::with_admin), for the files that
// implement the store: one at a time, a connection made when there is none or it broke, and a
// statement tried once more on a new one when the link was lost; a refusal for what a statement
// carries is store_refused.
#pragma once

#include <adapters/postgres/pg_store.hpp>

#include <dibs/store.hpp>

namespace dibs::pg {

template <class F>
auto pg_store::with_admin(F f) {
  std::lock_guard lock(admin_mutex_);
  for (int attempt = 0;; ++attempt) {
    try {
      if (!admin_ || !admin_->usable()) admin_ = pg_connection::connect_blocking(link_);
      return f(*admin_);
    } catch (const pg_error& e) {
      if (refuses_content(e.sqlstate)) throw store_refused(e.what());
      if (!connection_lost(e.sqlstate) || attempt > 0) throw;
      admin_.reset();
    }
  }
}

}  // namespace dibs::pg
