//! Ctrl-C and SIGTERM during `run`: the first asks the engine to stop (the
//! running cell ends at once with its figures, the rest are skipped, the
//! report and `-o` are still written, exit 130 or 143); a second ends the
//! process at once.
use poolbench_engine::interrupt;
use tokio::signal::unix::{signal, SignalKind};

/// Processes this one started (a scenario step's `poolbench serve`): a
/// second signal, which quits at once, stops them first.
static CHILDREN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Stop `pid` too if a second signal quits at once.
pub(crate) fn adopt(pid: u32) {
    CHILDREN.lock().unwrap_or_else(|p| p.into_inner()).push(pid);
}

/// `pid` was stopped and waited for.
pub(crate) fn release(pid: u32) {
    CHILDREN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|&c| c != pid);
}

fn stop_children() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let children = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    for &pid in children.iter() {
        if let Ok(pid) = i32::try_from(pid) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// Whether a watcher runs: one per process, however many runs (a
/// scenario's steps) ask for it, or a second watcher would take the first
/// Ctrl-C for the second and quit at once.
static WATCHING: std::sync::Mutex<bool> = std::sync::Mutex::new(false);

/// Catch SIGINT and SIGTERM from now on, on a thread of their own.
pub(crate) fn watch() -> std::io::Result<()> {
    let mut watching = WATCHING.lock().unwrap_or_else(|p| p.into_inner());
    if *watching {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Registered before this returns, so no early signal is missed.
    let (mut int, mut term) = runtime.block_on(async {
        Ok::<_, std::io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    })?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                loop {
                    let sig = tokio::select! {
                        _ = int.recv() => 2,
                        _ = term.recv() => 15,
                    };
                    if interrupt::requested().is_some() {
                        stop_children();
                        std::process::exit(128 + sig);
                    }
                    interrupt::request(sig);
                    eprintln!(
                        "\ninterrupted: ending the current cell and writing what was measured (again to quit at once)"
                    );
                }
            })
        })?;
    *watching = true;
    Ok(())
}

/// The exit code of a run stopped by a signal: 128 + its number.
pub(crate) fn exit_code() -> Option<u8> {
    interrupt::requested().map(|s| (128 + s) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_stops_the_adopted_children() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        adopt(child.id());
        stop_children();
        let status = child.wait().unwrap();
        release(child.id());
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");
    }
}
