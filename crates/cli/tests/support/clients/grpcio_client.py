"""A client written with grpcio, for `poolbench serve --check-client` tests:
one channel carrying many concurrent calls.

    python3 grpcio_client.py HOST:PORT --calls C --rounds R [--proto FILE] [--timeout S]

It compiles the Greeter's proto (helloworld.proto, by default the one in
crates/greeter/proto) with grpc_tools.protoc into a temporary directory
and imports the result, as support/grpc_server.py does with its protos.
Then ONE grpc.insecure_channel sends C SayHello calls at once (as
futures), waits for all of them, and does that R times. A channel is one
HTTP/2 connection: once the server's MAX_CONCURRENT_STREAMS is reached,
the calls beyond it wait inside the client instead of using a second
connection.

Bounded: each call has a deadline of --timeout seconds (default 30).
Prints `ok N failed M` and exits 0 when every call succeeded with the
expected greeting, 1 otherwise (the first error goes to stderr)."""
import argparse
import importlib
import importlib.resources
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO = os.path.normpath(os.path.join(HERE, "../../../../greeter/proto/helloworld.proto"))


def generate(proto, out):
    """Compiles PROTO into OUT and imports it: (helloworld_pb2, helloworld_pb2_grpc)."""
    from grpc_tools import protoc

    well_known = str(importlib.resources.files("grpc_tools") / "_proto")
    rc = protoc.main([
        "grpc_tools.protoc",
        "-I" + os.path.dirname(proto),
        "-I" + well_known,
        "--python_out=" + out,
        "--grpc_python_out=" + out,
        proto,
    ])
    if rc != 0:
        sys.exit(f"grpcio_client.py: protoc failed ({rc}) on {proto}")
    sys.path.insert(0, out)
    name = os.path.splitext(os.path.basename(proto))[0]
    return importlib.import_module(name + "_pb2"), importlib.import_module(name + "_pb2_grpc")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", help="HOST:PORT of the Greeter (h2c)")
    p.add_argument("--calls", type=int, default=50, help="calls in flight at once on the channel")
    p.add_argument("--rounds", type=int, default=4, help="times the calls are sent")
    p.add_argument("--proto", default=DEFAULT_PROTO, help="helloworld.proto")
    p.add_argument("--timeout", type=float, default=30.0, help="deadline of each call, seconds")
    args = p.parse_args()

    import grpc

    out = tempfile.mkdtemp(prefix="poolbench-grpcio-client-")
    try:
        pb2, pb2_grpc = generate(os.path.abspath(args.proto), out)
        ok = failed = 0
        # No proxy from the environment: the target is local.
        with grpc.insecure_channel(args.target, options=[("grpc.enable_http_proxy", 0)]) as channel:
            stub = pb2_grpc.GreeterStub(channel)
            for r in range(args.rounds):
                names = [f"r{r}c{c}" for c in range(args.calls)]
                calls = [
                    (n, stub.SayHello.future(pb2.HelloRequest(name=n), timeout=args.timeout))
                    for n in names
                ]
                for n, call in calls:
                    try:
                        reply = call.result()
                        if n not in reply.message:
                            raise RuntimeError(f"SayHello({n!r}) answered {reply.message!r}")
                        ok += 1
                    except Exception as e:  # noqa: BLE001 - counted and reported
                        if failed == 0:
                            print(f"grpcio_client.py: {e!r}", file=sys.stderr)
                        failed += 1
        print(f"ok {ok} failed {failed}")
        return 0 if failed == 0 else 1
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
