#!/usr/bin/env python3
"""`make run` (scripts/run.sh) as a user meets it, with a built binary and a private cluster of its own:

  - a normal start (a new private cluster) prints the block to paste, and nothing on the way that reads like a
    problem: no line says "warning", "error", "dangerous" or "Permission denied";
  - a second start on ports already in use prints no block, exits non-zero, and names PORT and STREAM_PORT;
  - after the service and the private cluster are stopped (`make stop`), a start in the terminal where the block
    was pasted (DATABASE_URL set to the private cluster's URL) starts the cluster again and serves;
  - with DATABASE_URL naming a database that is down, the server says "database unreachable" within 10 s.

    run_script.py BINARY      (a built `switchboard`; stdlib only)
"""
import json, os, pathlib, re, shutil, signal, socket, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = str(ROOT / "scripts/run.sh")
PG = str(ROOT / "scripts/pg.sh")
SERVING = "Switchboard is serving on"
PROBLEM = re.compile(r"warning|error|dangerous|permission denied", re.I)
started = []


def fail(message):
    raise SystemExit(f"run script: {message}")


def port_is_free(port):
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        with socket.socket(family) as s:
            try:
                s.bind((address, port))
            except OSError:
                return False
    return True


def free_pair():
    """A port whose next one is free too: PORT and the STREAM_PORT that run.sh derives from it."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 65535 and port_is_free(port) and port_is_free(port + 1):
            return port
    fail("found no two free ports in a row")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run:
    """One scripts/run.sh in a session of its own, its stdout and stderr together in a file."""

    def __init__(self, scratch, name, binary, **settings):
        self.log_path = scratch / f"{name}.log"
        env = {k: v for k, v in os.environ.items()
               if k not in ("DATABASE_URL", "SWITCHBOARD_ADMIN_TOKEN", "PORT", "STREAM_PORT", "HOST", "LOG_LEVEL",
                            "METRICS_TOKEN", "STREAM_HANDOFF")}
        env.update(SWITCHBOARD_BINARY=binary, PG_DIR=str(scratch / "pg"))
        env.update({k: str(v) for k, v in settings.items()})
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([RUN], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        started.append(self.process)

    def output(self):
        return self.log_path.read_text(errors="replace")

    def wait_for(self, condition, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = self.output()
            if condition(text):
                return text
            if self.process.poll() is not None:
                text = self.output()
                if condition(text):
                    return text
                fail(f"scripts/run.sh exited {self.process.returncode} before {what}:\n{text}")
            time.sleep(0.2)
        fail(f"no {what} within {seconds} s:\n{self.output()}")

    def wait_until_serving(self, seconds):
        """The lines the block asks to paste, once the block is complete (the blank line after it written)."""
        def complete(text):
            after = text.split("paste:", 1)[1].lstrip("\n") if "paste:" in text else ""
            return "\n\n" in after
        text = self.wait_for(complete, seconds, "serving block")
        block = text.split("paste:", 1)[1].lstrip("\n").split("\n\n", 1)[0]
        return [line.strip() for line in block.splitlines()]

    def stop(self):
        stop(self.process)


def stop(process):
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass


def no_problem_lines(text, what):
    bad = [line for line in text.splitlines() if PROBLEM.search(line)]
    if bad:
        fail(f"{what} printed lines that read like problems:\n" + "\n".join(bad) + f"\n--- whole output\n{text}")


def exported(pasted, name):
    for line in pasted:
        match = re.fullmatch(rf"export {name}='(.*)'", line)
        if match:
            return match.group(1)
    fail(f"the block has no `export {name}='…'`:\n" + "\n".join(pasted))


def second_start_is_refused(scratch, binary, name, **settings):
    second = Run(scratch, name, binary, **settings)
    try:
        second.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"a second start on ports in use ({settings}) still runs after 60 s:\n{second.output()}")
    text = second.output()
    if second.process.returncode == 0:
        fail(f"a second start on ports in use ({settings}) exited 0:\n{text}")
    if SERVING in text:
        fail(f"a second start on ports in use ({settings}) claimed to serve:\n{text}")
    for variable in ("PORT", "STREAM_PORT"):
        if not re.search(rf"\b{variable}\b", text):
            fail(f"a second start on ports in use ({settings}) does not name {variable}:\n{text}")


def main():
    binary = os.path.abspath(sys.argv[1])
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="switchboard-run-"))
    cluster = scratch / "pg"
    try:
        # A normal start with a new private cluster, on free ports (STREAM_PORT derived: PORT+1).
        port = free_pair()
        first = Run(scratch, "first", binary, PORT=port)
        pasted = first.wait_until_serving(120)
        no_problem_lines(first.output(), "a normal start")
        url, token = exported(pasted, "DATABASE_URL"), exported(pasted, "SWITCHBOARD_ADMIN_TOKEN")

        # A second start on the same PORT (its STREAM_PORT busy too), then one whose STREAM_PORT alone is taken.
        second_start_is_refused(scratch, binary, "second", PORT=port)
        second_start_is_refused(scratch, binary, "third", PORT=free_port(), STREAM_PORT=port + 1)
        if first.process.poll() is not None:
            fail(f"the first service stopped:\n{first.output()}")
        print("run script: a second start on ports in use is refused and names PORT and STREAM_PORT")

        # The next morning: the service and the private cluster stopped, then `make run` in the terminal where the
        # block was pasted; once with the URL as printed, once naming the cluster through PG_DIR (a link under root).
        first.stop()
        for number, database_url in enumerate([url, f"host = '{cluster}'  port=5432 dbname=postgres user=postgres"]):
            subprocess.run([PG, "stop", str(cluster)], check=True)
            if subprocess.run([PG, "status", str(cluster)]).returncode == 0:
                fail("scripts/pg.sh stop left the private cluster running")
            again = Run(scratch, f"again-{number}", binary, PORT=port, DATABASE_URL=database_url,
                        SWITCHBOARD_ADMIN_TOKEN=token)
            line = next((line for line in again.wait_until_serving(60) if line.startswith("export DATABASE_URL=")), None)
            no_problem_lines(again.output(), "a start with the private cluster's URL")
            # What the block asks to paste is the URL in use, quoted for the shell.
            pasted_url = subprocess.run(["bash", "-c", f'{line}\nprintf %s "$DATABASE_URL"'], capture_output=True,
                                        text=True).stdout if line else None
            if pasted_url != database_url:
                fail(f"the block's DATABASE_URL line {line!r} does not give back {database_url!r}")
            again.stop()
        print("run script: with DATABASE_URL naming the stopped private cluster, it starts the cluster and serves")

        # A database that is down elsewhere: the server says so within 10 s, once (repeats are 30 s apart).
        down = Run(scratch, "down", binary, PORT=free_pair(),
                   DATABASE_URL=f"host=127.0.0.1 port={free_port()} user=x dbname=x connect_timeout=2")
        text = down.wait_for(lambda text: "database unreachable" in text, 10, '"database unreachable" line')
        line = next(line for line in text.splitlines() if "database unreachable" in line)
        try:
            fields = json.loads(line)
        except ValueError:
            fail(f"the database unreachable line is not JSON: {line}")
        missing = [k for k in ("target", "error", "hint") if k not in fields]
        if fields.get("msg") != "database unreachable" or missing:
            fail(f"the database unreachable line lacks msg or {missing}: {line}")
        time.sleep(5)
        text = down.output()
        if text.count("database unreachable") != 1:
            fail(f"the database unreachable line repeated within seconds:\n{text}")
        if SERVING in text:
            fail(f"a start with a database that is down claimed to serve:\n{text}")
        down.stop()
        print("run script: a database that is down is named in one log line within 10 s")
    finally:
        for process in started:
            stop(process)
        real = os.path.realpath(cluster)
        subprocess.run([PG, "stop", real], check=False)
        shutil.rmtree(real, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
