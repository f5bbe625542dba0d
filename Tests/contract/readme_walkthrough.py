#!/usr/bin/env python3
"""Runs the README's walk-through exactly as a newcomer would: `scripts/run.sh` (what `make run` calls) with no
DATABASE_URL, with its cluster in a folder the postgres user cannot enter; the `export` lines it prints pasted into
a fresh bash whose working directory is the checkout ("from /path/to/switchboard"); then every ```sh block between
the README's walk-through markers, in order, in that same shell. Each block's output must match the ```text block
that follows it in the README (`…` stands for any text within a line); a block with no ```text block after it must
print nothing. The walk-through must leave the checkout as it found it: `git status` shows nothing new afterwards
(ignored files it wrote are removed).

    readme_walkthrough.py BINARY      (a built `switchboard`; stdlib only)
"""
import os, pathlib, re, select, shutil, signal, socket, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- walkthrough:begin -->", "<!-- walkthrough:end -->"
BLOCK_TIMEOUT = 60


def walkthrough_blocks(readme):
    """[(commands, expected output or None)] from the fenced blocks between the markers."""
    text = readme.split(BEGIN, 1)[1].split(END, 1)[0]
    fences = re.findall(r"^```(\w*)\n(.*?)^```\s*$", text, flags=re.M | re.S)
    blocks = []
    for language, body in fences:
        if language == "sh":
            blocks.append([body, None])
        elif language == "text":
            if not blocks or blocks[-1][1] is not None:
                raise SystemExit("readme: a ```text block must follow a ```sh block")
            blocks[-1][1] = body
        else:
            raise SystemExit(f"readme: unexpected ```{language} block in the walk-through")
    if not blocks:
        raise SystemExit("readme: no walk-through blocks found")
    return blocks


def without_heartbeats(lines):
    """An event stream's heartbeat (the comment `: heartbeat` and its blank line) may arrive at any moment of a slow
    run: it is not part of what the README shows, so it is left out before comparing."""
    kept, skip_blank = [], False
    for line in lines:
        if line == ": heartbeat":
            skip_blank = True
            continue
        if skip_blank and line == "":
            skip_blank = False
            continue
        skip_blank = False
        kept.append(line)
    return kept


def matches(expected, actual):
    """Line by line; `…` matches any run of characters within a line."""
    want = [line.rstrip() for line in expected.rstrip("\n").split("\n")] if expected is not None else []
    got = without_heartbeats([line.rstrip() for line in actual.rstrip("\n").split("\n")]) if actual.strip() else []
    if len(want) != len(got):
        return False
    for pattern, line in zip(want, got):
        regex = "".join(".*?" if part == "…" else re.escape(part) for part in re.split("(…)", pattern))
        if not re.fullmatch(regex, line):
            return False
    return True


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Shell:
    """One bash, fed blocks on stdin; each block's output is read up to a marker printed after it."""

    def __init__(self, cwd, env):
        self.process = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.buffer = b""

    def run(self, commands):
        marker = f"<<<walkthrough-{time.monotonic_ns()}>>>"
        self.process.stdin.write(f"{commands}\necho; echo '{marker}'\n".encode())
        self.process.stdin.flush()
        deadline = time.monotonic() + BLOCK_TIMEOUT
        end = f"\n{marker}\n".encode()
        while end not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.process.stdout], [], [], remaining)[0]:
                raise SystemExit(f"readme: block timed out after {BLOCK_TIMEOUT} s:\n{commands}\n"
                                 f"output so far:\n{self.buffer.decode(errors='replace')}")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit(f"readme: the shell exited during:\n{commands}")
            self.buffer += chunk
        output, self.buffer = self.buffer.split(end, 1)
        return output.decode(errors="replace")[:-1] if output.endswith(b"\n") else output.decode(errors="replace")

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def git_status(*options):
    """`git status --porcelain` lines of the checkout, or None outside a git work tree."""
    result = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", *options], capture_output=True, text=True)
    return set(result.stdout.splitlines()) if result.returncode == 0 else None


# Ignored folders that builds and tools create beside a walk-through run, never removed by it.
KEPT = (".build/", ".venv/", ".data/", ".swiftpm/")


def remove_new_ignored(before):
    """Removes what the walk-through created among the files git ignores; returns their paths."""
    after = git_status("--ignored")
    if before is None or after is None:
        return []
    created = sorted(line[3:] for line in after - before if line.startswith("!! "))
    created = [path for path in created if not any(part in path for part in KEPT)]
    for path in created:
        target = ROOT / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    return created


def start_service(binary, scratch):
    """scripts/run.sh with no DATABASE_URL; returns the process and the lines it asked to paste."""
    port, stream_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SWITCHBOARD_ADMIN_TOKEN")}
    env.update(SWITCHBOARD_BINARY=binary, PG_DIR=str(scratch / "pg"), PORT=str(port), STREAM_PORT=str(stream_port),
               HOST="127.0.0.1")
    log = open(scratch / "run.log", "wb")
    service = subprocess.Popen([str(ROOT / "scripts/run.sh")], cwd=ROOT, env=env, stdout=log, stderr=log,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = (scratch / "run.log").read_text(errors="replace")
        # The block is complete once the blank line after it has been written (run.sh prints it line by line).
        after = text.split("paste:", 1)[1].lstrip("\n") if "paste:" in text else ""
        if "\n\n" in after:
            block = after.split("\n\n", 1)[0]
            return service, [line.strip() for line in block.splitlines()]
        if service.poll() is not None:
            raise SystemExit(f"readme: scripts/run.sh exited {service.returncode}:\n{text}")
        time.sleep(0.2)
    raise SystemExit("readme: scripts/run.sh printed no ready block within 120 s")


def main():
    binary = os.path.abspath(sys.argv[1])
    blocks = walkthrough_blocks((ROOT / "README.md").read_text())
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="switchboard-newcomer-"))  # mode 0700, as mktemp -d makes
    service = None
    ignored_before = None
    try:
        service, pasted = start_service(binary, scratch)
        exports = [line for line in pasted if line.startswith("export ")]
        for name in ("SWITCHBOARD", "DATABASE_URL", "SWITCHBOARD_ADMIN_TOKEN", "PATH"):
            if not any(line.startswith(f"export {name}=") for line in exports):
                raise SystemExit(f"readme: scripts/run.sh did not print `export {name}=…`:\n" + "\n".join(pasted))
        if not any(line.startswith('switchboard tenants create') for line in pasted):
            raise SystemExit("readme: scripts/run.sh did not print the command that creates a tenant")
        home = scratch / "home"
        home.mkdir()
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "TMPDIR": str(scratch)}
        status_before, ignored_before = git_status("--untracked-files=all"), git_status("--ignored")
        shell = Shell(ROOT, env)
        shell.run("set -o pipefail\n" + "\n".join(exports))
        for number, (commands, expected) in enumerate(blocks, 1):
            output = shell.run(commands)
            if not matches(expected, output):
                raise SystemExit(f"readme: block {number} printed what the README does not show.\n"
                                 f"--- block\n{commands}--- README shows\n{expected or '(nothing)'}\n"
                                 f"--- printed\n{output}")
        shell.close()
        print(f"readme walk-through: {len(blocks)} blocks printed what the README shows")
        status_after = git_status("--untracked-files=all")
        if status_before is not None and status_after is not None and status_after - status_before:
            raise SystemExit("readme: the walk-through changed the checkout (git status, new lines):\n"
                             + "\n".join(sorted(status_after - status_before)))
        removed = remove_new_ignored(ignored_before)
        ignored_before = None
        if removed:
            print("readme walk-through: removed the ignored files it wrote: " + ", ".join(removed))
        if status_before is not None:
            print("readme walk-through: run from the checkout, it left git status as it was")
    finally:
        if ignored_before is not None:
            remove_new_ignored(ignored_before)
        if service is not None:
            os.killpg(service.pid, signal.SIGTERM)
            try:
                service.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(service.pid, signal.SIGKILL)
        cluster = os.path.realpath(scratch / "pg")
        subprocess.run([str(ROOT / "scripts/pg.sh"), "stop", cluster], check=False)
        shutil.rmtree(cluster, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
