// A chaos round against the MongoDB-wire server: the same faults but the server restart (the
// stand-in keeps its data in memory), claims rotating through the four strategies.
#pragma once

#include "round.hpp"

#include <dibs/stores/mongo_store.hpp>

namespace dibs::chaos {

class mongo_round : public round_base {
 public:
  using round_base::round_base;
  void run();

 private:
  std::vector<std::string> store_args() const override {
    return {"--store", uri_, "--db", "dibs_chaos", "--collection", collection_, "--claim", strategy_};
  }
  std::string lease() const override { return "2s"; }
  void print_open_items() override;

  std::string collection_, strategy_;
  std::shared_ptr<mongo::mongo_store> store_;
};

}  // namespace dibs::chaos
