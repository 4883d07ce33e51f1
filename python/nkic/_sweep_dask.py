"""The sweep's executor on a dask.distributed cluster: one task per configuration, submitted to
a running scheduler (tcp://HOST:PORT) or to a LocalCluster started for the sweep ("auto").
A worker that dies takes its tasks back to the scheduler, which runs them on another worker;
a task that still fails comes back as an exception, and _sweep.drive retries it once."""
import os
import uuid

from . import _sweep


class DaskExecutor:
    def __init__(self, scheduler, workers=None):
        try:
            import distributed
        except ImportError:
            raise _sweep.SweepUsageError("--scheduler needs dask.distributed (Debian: apt-get install "
                                         "python3-distributed)") from None
        self.distributed, self.cluster = distributed, None
        try:
            if scheduler == "auto":
                self.cluster = distributed.LocalCluster(n_workers=workers or len(os.sched_getaffinity(0)),
                                                        threads_per_worker=1, dashboard_address=None)
                self.client = distributed.Client(self.cluster)
            else:
                self.client = distributed.Client(scheduler, timeout="30s")
        except OSError as e:
            if self.cluster is not None:
                self.cluster.close()
            raise _sweep.SweepUsageError(f"cannot reach the dask scheduler {scheduler!r}: {e}") from None
        self.sweep_id = uuid.uuid4().hex[:8]
        self.submitted = 0

    def submit(self, task):
        # A fresh key per attempt: a retry is a new task, not the failed one's cached result.
        self.submitted += 1
        return self.client.submit(_sweep.run_task, task, key=f"nkic-sweep-{self.sweep_id}-{self.submitted}",
                                  pure=False)

    def wait_first(self, futures):
        return self.distributed.wait(futures, return_when="FIRST_COMPLETED").done

    def cancel(self, futures):
        self.client.cancel(futures)

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
