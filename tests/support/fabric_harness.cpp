#include "support/fabric_harness.h"

#include "support/test_util.h"
#include "tlm/kernel/calendar.h"

namespace fabricsim::testutil {

namespace {

class Driver : public NpuClient {
 public:
  Driver(Platform& p, const std::vector<Flow>& t) : platform_(p), transfers_(t), receives_(t.size()) {}
  void start(std::size_t i) {
    const Flow& t = transfers_[i];
    platform_.npu(t.dst).start_recv(t.src, t.bytes, static_cast<std::int64_t>(i), this, &receives_[i]);
    platform_.npu(t.src).start_send(t.dst, t.bytes, static_cast<std::int64_t>(i), nullptr, nullptr);
  }
  void operation_done(NpuOperation* op) override { static_cast<Receive*>(op)->done = now_ticks(); }
  std::vector<Tick> done() const {
    std::vector<Tick> out;
    for (const Receive& r : receives_) out.push_back(r.done);
    return out;
  }

 private:
  struct Receive : NpuOperation {  // the only operations this driver waits for
    Tick done = kNever;
  };
  Platform& platform_;
  const std::vector<Flow>& transfers_;
  std::vector<Receive> receives_;
};

}  // namespace

std::string platform_file(const std::string& yaml, const std::string& name) {
  const std::string path = scratch_dir("platform") + "/" + name;
  write_text(path, yaml);
  return path;
}

TransferRun run_transfers(const std::string& yaml, const std::vector<Flow>& transfers, Tick sample_every,
                          const std::function<void(const Platform&)>& sample) {
  TransferRun run;
  run.platform = std::make_unique<Platform>(load_platform(platform_file(yaml)));
  Driver driver(*run.platform, transfers);
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    Calendar::instance().schedule<&Driver::start>(transfers[i].start, &driver, i);
  }
  if (sample && sample_every > 0) {
    while (sc_core::sc_pending_activity() && !Calendar::instance().has_error()) {
      sc_core::sc_start(to_sc_time(sample_every));
      sample(*run.platform);
    }
  } else {
    sc_core::sc_start();
  }
  if (auto e = Calendar::instance().take_error()) std::rethrow_exception(e);
  run.done = driver.done();
  for (const auto& f : run.platform->fabrics()) {
    for (const auto& l : f.links) {
      if (l.link->frames_waiting()) run.stuck += l.link->describe_waiting() + "\n";
    }
  }
  return run;
}

}  // namespace fabricsim::testutil
