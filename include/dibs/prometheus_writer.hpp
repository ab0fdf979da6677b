// Prometheus text exposition (format 0.0.4), written metric by metric: the engine's figures
// (metrics_text.cpp) and an adapter's own (extra_figures.hpp) share it.
#pragma once

#include <dibs/histogram.hpp>

#include <cstdio>
#include <string>

namespace dibs {

class prometheus_writer {
 public:
  static std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
  }

  // A label's value as the format quotes it: backslash, double quote and newline escaped.
  static std::string escape(const std::string& v) {
    std::string out;
    out.reserve(v.size());
    for (const char c : v) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out;
  }

  void metric(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(const std::string& name, double v) { out_ += name + ' ' + number(v) + '\n'; }
  void counter(const char* name, const char* help, double v) {
    metric(name, "counter", help);
    sample(name, v);
  }
  void gauge(const char* name, const char* help, double v) {
    metric(name, "gauge", help);
    sample(name, v);
  }
  template <std::size_t N>
  void hist(const char* name, const char* help, const histogram<N>& h) {
    metric(name, "histogram", help);
    for (std::size_t i = 0; i < N; ++i)
      sample(std::string(name) + "_bucket{le=\"" + number(h.bound(i)) + "\"}", static_cast<double>(h.cumulative(i)));
    sample(std::string(name) + "_bucket{le=\"+Inf\"}", static_cast<double>(h.count()));
    sample(std::string(name) + "_sum", h.sum());
    sample(std::string(name) + "_count", static_cast<double>(h.count()));
  }

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace dibs
