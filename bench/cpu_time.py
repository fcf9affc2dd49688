"""Run a command and write the CPU it used (user and system seconds of the
whole process and every child it waited for, from wait4's rusage) and its
wall time to a file: `cpu_time.py OUT CMD [ARGS...]` writes "USER SYS WALL".
The command's stdout and stderr pass through; its exit status is returned."""

import os
import sys
import time


def main() -> int:
    out, cmd = sys.argv[1], sys.argv[2:]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    with open(out, "w") as f:
        f.write(f"{usage.ru_utime:.6f} {usage.ru_stime:.6f} {wall:.6f}\n")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
