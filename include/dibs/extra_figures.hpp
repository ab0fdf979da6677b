// Figures an adapter keeps of its own beside the engine's counters (an HTTP processor: answers
// by status class, API latency). The engine knows nothing of what they count: it keeps them
// for the run, one of each kind, and shows them after its own in /metrics.
#pragma once

#include <dibs/prometheus_writer.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace dibs {

class figures_source {
 public:
  virtual ~figures_source() = default;
  // Writes these figures' metrics (HELP, TYPE, samples).
  virtual void prometheus(prometheus_writer& w) const = 0;
};

class extra_figures {
 public:
  // The run's one T (a figures_source with a default constructor), made on first use. Any thread;
  // processors call it once, when they are made, and keep the reference (it lives as long as the
  // engine).
  template <class T>
  T& get() {
    std::lock_guard lock(mutex_);
    for (auto& s : sources_)
      if (auto* t = dynamic_cast<T*>(s.get())) return *t;
    sources_.push_back(std::make_unique<T>());
    return static_cast<T&>(*sources_.back());
  }

  // The run's T if something made it, else nullptr (a reader, such as the dashboard's history,
  // must not create figures that /metrics would then show as zeros).
  template <class T>
  const T* find() const {
    std::lock_guard lock(mutex_);
    for (const auto& s : sources_)
      if (const auto* t = dynamic_cast<const T*>(s.get())) return t;
    return nullptr;
  }

  void prometheus(prometheus_writer& w) const {
    std::lock_guard lock(mutex_);
    for (const auto& s : sources_) s->prometheus(w);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<figures_source>> sources_;
};

}  // namespace dibs
