"""The async frames of a Switchboard binary, read from its async function pointers (bench/async-frames.sh).

Every async function has a symbol ending in `Tu`: a 32-bit relative offset to its code and the 32-bit size of the
context (frame) its caller allocates for it from the task's allocator. That allocator hands out slabs of 984 bytes;
a frame that does not fit in what is left of one costs a malloc of a new slab (kept until the task ends), and a
request's task is new for every request. So these sizes, on a request's path, say how many mallocs its frames cost.

    python3 -I bench/async_frames.py BINARY
"""
import struct, subprocess, sys

SLAB = 984
# The frames a text-message POST's task holds at its deepest (a query's wait), outermost first: (label, pieces of the
# simplified demangled name; the largest match counts). A function inlined into its caller has no frame of its own.
POST_PATH = [
    ("request task", ["closure #2 in ServerCore.start("]),
    ("routing", ["RouterResponder.respond(to:)"]),
    ("middleware", ["MiddlewareStack.respond(to:next:)"]),
    ("access guard", ["closure #1 in AccessGuard.require("]),
    ("handler (text only, inlined)", ["InteractionRoutes.postMessage@"]),
    ("pooled connection", ["PostgresPool.withConnection"]),
    ("the handler's closure", ["closure #1 in InteractionRoutes.postMessageAlone("]),
    ("store", ["InteractionStore.addMessageAlone("]),
    ("query", ["PostgresConnection.query(_:_:cancellable:)"]),
    ("prepared statement", ["PostgresConnection.runPrepared("]),
    ("run", ["PostgresConnection.run(cancellable:bounded:send:)"]),
    ("cancellation handler", ["withTaskCancellationHandler<A>(operation:onCancel:isolation:)"]),
    ("its operation", ["closure #1 in PostgresConnection.run("]),
    ("exchange, with the socket wait", ["PostgresConnection.exchange("]),
    ("continuation", ["withCheckedThrowingContinuation<A>(isolation:function:_:)"]),
]
OWN = ("$s8Postgres", "$s10HTTPServer", "$s12Interactions", "$s8Accounts", "$s3App", "$s8Webhooks", "$s12Coordination",
       "$s5Feeds", "$s7Console", "$s11MediaSafety")


def sections(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 6 and fields[0].startswith("[") and fields[0] != "[Nr]" and fields[2] != "NOBITS":
            try:
                found.append((int(fields[3], 16), int(fields[4], 16), int(fields[5], 16)))
            except ValueError:
                pass
    return found


def frames(binary):
    data = open(binary, "rb").read()
    mapped = sections(binary)
    symbols = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout.splitlines()
    sizes = {}
    for line in symbols:
        parts = line.split()
        if len(parts) != 3 or not parts[2].endswith("Tu"):
            continue
        address = int(parts[0], 16)
        for start, offset, size in mapped:
            if start <= address < start + size:
                sizes[parts[2][:-2]] = struct.unpack_from("<iI", data, offset + address - start)[1]
                break
    names = list(sizes)
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    return [(sizes[name], name, pretty) for name, pretty in zip(names, demangled)]


def main():
    table = frames(sys.argv[1])
    print("| frame on a message POST's path | bytes |")
    print("| --- | ---: |")
    total = over = 0
    for label, pieces in POST_PATH:
        # A closure or thunk of a function is matched only when asked for by name.
        matches = [size for size, _, pretty in table if all(piece in pretty for piece in pieces)
                   and (pieces[0].startswith("closure") or not pretty.startswith(("closure", "partial apply")))]
        size = max(matches) if matches else None
        print(f"| {label} | {size if size is not None else 'not found'} |")
        if size:
            total += size
            over += size > SLAB
    print(f"| **all of them** | **{total}** |")
    print()
    print("Largest frames of Switchboard's own modules:")
    print()
    print("| bytes | function |")
    print("| ---: | --- |")
    own = sorted(((size, pretty) for size, name, pretty in table if name.startswith(OWN)), reverse=True)
    for size, pretty in own[:12]:
        print(f"| {size} | `{pretty[:140]}` |")
    print()
    print(f"**MEASURED**: a message POST's async frames at a query's wait = {total} bytes, about "
          f"{(total + SLAB - 1) // SLAB} task-allocator slabs of {SLAB} (a malloc each beyond the task's first); "
          f"frames over one slab on that path: {over}")
    print()
    print(f"**MEASURED**: async frames of Switchboard's own modules over one slab ({SLAB} bytes): "
          f"{sum(1 for size, _ in own if size > SLAB)}, the largest {own[0][0] if own else 0} bytes")


main()
