//! Waking a load thread's runtime to the microsecond. Tokio's timer ticks
//! in milliseconds, too coarse to pace an open loop; a timerfd registered
//! with the thread's own I/O driver wakes its epoll at the time asked (the
//! thread's timer slack tightened), and the last few microseconds are
//! spent yielding to the runtime, which polls its sockets meanwhile, so the
//! requests in flight on that thread are answered while it waits.
use std::time::{Duration, Instant};

/// The last stretch before an intended time is spent yielding rather than
/// asleep: a wake-up from epoll takes a few microseconds to be running.
pub(crate) const SPIN: Duration = Duration::from_micros(20);
/// The longest nap, so a stop request is seen within it.
const MAX_NAP: Duration = Duration::from_millis(10);

/// Make this thread's sleeps wake on time: the kernel otherwise may delay
/// a wake-up by 50 µs (the default timer slack) to batch it with others.
pub(crate) fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_timerslack(1);
    }
}

/// A load thread's precise timer (tokio's, to the millisecond, where a
/// timerfd cannot be had).
pub(crate) struct Wake {
    #[cfg(target_os = "linux")]
    fd: Option<tokio::io::unix::AsyncFd<linux::Fd>>,
    /// The wake-up the timer is set for and has not yet given.
    armed: Option<Instant>,
}

impl Wake {
    /// A timer on the calling runtime's I/O driver; call from within it.
    pub(crate) fn new() -> Wake {
        tighten_timer_slack();
        Wake {
            #[cfg(target_os = "linux")]
            fd: linux::Fd::new(),
            armed: None,
        }
    }

    /// Wait toward `at`: until [`SPIN`] before it (at most [`MAX_NAP`]),
    /// or one yield to the runtime when closer. The caller checks the time
    /// again (a wait may also end early, e.g. on a stale wake-up).
    pub(crate) async fn toward(&mut self, at: Instant) {
        let now = Instant::now();
        let spin = SPIN;
        if at <= now + spin {
            if at > now {
                tokio::task::yield_now().await;
            }
            return;
        }
        let wake_at = (at - spin).min(now + MAX_NAP);
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            if self.armed != Some(wake_at) {
                fd.get_ref().set(wake_at - now);
                self.armed = Some(wake_at);
            }
            if let Ok(mut ready) = fd.readable().await {
                ready.clear_ready();
                ready.get_inner().clear();
                self.armed = None;
            }
            return;
        }
        tokio::time::sleep_until(wake_at.into()).await;
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::time::Duration;
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;

    /// A non-blocking monotonic timerfd.
    pub(super) struct Fd(TimerFd);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    impl Fd {
        pub(super) fn new() -> Option<AsyncFd<Fd>> {
            let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
            let fd = TimerFd::new(ClockId::CLOCK_MONOTONIC, flags).ok()?;
            // The one constructor without `unsafe`, deprecated as it cannot
            // check that the descriptor stays open and the same: `Fd` owns
            // its timerfd and gives the same descriptor for its lifetime.
            #[allow(deprecated)]
            AsyncFd::with_interest(Fd(fd), Interest::READABLE).ok()
        }

        /// Expire once, `after` from now (never zero: that would disarm).
        pub(super) fn set(&self, after: Duration) {
            let after = TimeSpec::from_duration(after.max(Duration::from_nanos(1)));
            let _ = self
                .0
                .set(Expiration::OneShot(after), TimerSetTimeFlags::empty());
        }

        /// Read the expirations, if any (a non-blocking read).
        pub(super) fn clear(&self) {
            let _ = self.0.wait();
        }
    }
}
