#include "sim/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

namespace nkic::sim {

namespace {

int threads_from_env() {
  if (const char* s = std::getenv("NKIC_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v >= 1) return static_cast<int>(std::min<long>(v, 256));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Workers sleep until a job is posted; tasks are claimed from one atomic counter.
class Pool {
 public:
  explicit Pool(int threads) : owner_(getpid()) {
    for (; workers_ + 1 < threads; ++workers_) std::thread([this] { work(); }).detach();
  }

  int size() const { return workers_ + 1; }

  void run(int64_t n, const std::function<void(int64_t)>& f) {
    std::unique_lock<std::mutex> busy(job_, std::try_to_lock);
    // A forked child has no workers: its copy of the pool runs jobs inline.
    if (!busy.owns_lock() || workers_ == 0 || n <= 1 || getpid() != owner_) {
      for (int64_t i = 0; i < n; ++i) f(i);
      return;
    }
    {
      std::lock_guard<std::mutex> l(m_);
      f_ = &f;
      n_ = n;
      next_.store(0);
      active_ = workers_;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> l(m_);
    done_.wait(l, [this] { return active_ == 0; });
    f_ = nullptr;
  }

 private:
  void drain() {
    for (int64_t i; (i = next_.fetch_add(1)) < n_;) (*f_)(i);
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(m_);
        wake_.wait(l, [&] { return generation_ != seen; });
        seen = generation_;
      }
      drain();
      std::lock_guard<std::mutex> l(m_);
      if (--active_ == 0) done_.notify_one();
    }
  }

  const pid_t owner_;
  int workers_ = 0;
  std::mutex job_;  // held by the caller of the running job
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* f_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  int active_ = 0;
  uint64_t generation_ = 0;
};

// Never destroyed: its workers wait until the process ends (a forked child,
// which has none, must not join them either).
Pool& pool() {
  static Pool* p = new Pool(threads_from_env());
  return *p;
}

}  // namespace

int sim_threads() { return pool().size(); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  std::vector<std::exception_ptr> failed(static_cast<size_t>(n));
  pool().run(n, [&](int64_t i) {
    try {
      f(i);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace nkic::sim
