"""A gRPC server written with Python's grpcio, for tests that must not
depend on a server written here: it serves shop.v1.Orders from
proto/shop/v1/orders.proto (which imports shop/v1/money.proto).

    python3 grpc_server.py --proto-root DIR --record FILE [--reflection] [--fail-item N]

At start it compiles DIR/shop/v1/{money,orders}.proto with grpc_tools.protoc
into a temporary directory and imports the result. It listens on
127.0.0.1, on a free port, without TLS, and once it serves it prints one
line, `PORT <n>`, to stdout: nothing else is ever written there (errors go
to stderr).

Create appends its request to FILE as one line of JSON, as protobuf's
json_format writes it (camelCase names, int64 as strings, fields left at
their default missing), before it answers: Order(id="o-<k>", item, customer)
with k = 1, 2, ... counting the orders answered. With --fail-item N, a
request whose item is N is kept all the same but answered NOT_FOUND ("no
such item"). Watch streams two Orders; a unary-only client must refuse it.
--reflection adds the server reflection service (grpc.reflection.v1alpha).

It stops, exit code 0, on SIGTERM, on SIGINT, or when its stdin reaches
end of file: start it with stdin a pipe and keep the pipe's writing end
open for as long as the server is wanted (stdin /dev/null stops it at once);
a test that dies then closes the pipe, and the server goes with it."""
import signal

# Blocked before anything can start a thread, so that every thread,
# grpcio's included, inherits the mask and the main thread's sigwait()
# alone takes them: no Python handler runs in the middle of a lock.
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.resources  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from concurrent import futures  # noqa: E402

PROTOS = ("shop/v1/money.proto", "shop/v1/orders.proto")


def watch_stdin():
    """Asks the process to stop (SIGTERM, to itself) when stdin ends."""
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def generate(proto_root, out):
    """Compiles PROTOS into OUT and imports them: (orders_pb2, orders_pb2_grpc)."""
    from grpc_tools import protoc

    well_known = str(importlib.resources.files("grpc_tools") / "_proto")
    rc = protoc.main([
        "grpc_tools.protoc",
        "-I" + proto_root,
        "-I" + well_known,
        "--python_out=" + out,
        "--grpc_python_out=" + out,
        *(os.path.join(proto_root, p) for p in PROTOS),
    ])
    if rc != 0:
        sys.exit(f"grpc_server.py: protoc failed ({rc}) on {proto_root}")
    sys.path.insert(0, out)
    # shop/ and shop/v1/ have no __init__.py: namespace packages.
    return (
        importlib.import_module("shop.v1.orders_pb2"),
        importlib.import_module("shop.v1.orders_pb2_grpc"),
    )


def main():
    parser = argparse.ArgumentParser(description="gRPC server shop.v1.Orders, for tests")
    parser.add_argument("--proto-root", required=True, help="directory holding shop/v1/*.proto")
    parser.add_argument("--record", required=True, help="file to append each Create request to, as JSON")
    parser.add_argument("--reflection", action="store_true", help="serve gRPC server reflection")
    parser.add_argument("--fail-item", type=int, help="answer Create NOT_FOUND for this item")
    args = parser.parse_args()

    threading.Thread(target=watch_stdin, name="stdin-eof", daemon=True).start()

    import grpc
    from google.protobuf import json_format

    out = tempfile.mkdtemp(prefix="poolbench-grpc-server-")
    try:
        pb2, pb2_grpc = generate(os.path.abspath(args.proto_root), out)
        record = open(args.record, "a", encoding="utf-8")
        lock = threading.Lock()
        answered = [0]

        class Orders(pb2_grpc.OrdersServicer):
            def Create(self, request, context):
                line = json_format.MessageToJson(request, indent=None)
                fail = args.fail_item is not None and request.item == args.fail_item
                with lock:
                    record.write(line + "\n")
                    record.flush()
                    if not fail:
                        answered[0] += 1
                        k = answered[0]
                if fail:
                    context.abort(grpc.StatusCode.NOT_FOUND, "no such item")
                return pb2.Order(id=f"o-{k}", item=request.item, customer=request.customer)

            def Watch(self, request, context):
                for k in (1, 2):
                    yield pb2.Order(id=f"w-{k}", item=k, customer=request.customer)

        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8),
            # Port 0 with SO_REUSEPORT could share a port another such
            # socket holds.
            options=[("grpc.so_reuseport", 0)],
        )
        pb2_grpc.add_OrdersServicer_to_server(Orders(), server)
        if args.reflection:
            from grpc_reflection.v1alpha import reflection

            reflection.enable_server_reflection(
                (pb2.DESCRIPTOR.services_by_name["Orders"].full_name, reflection.SERVICE_NAME),
                server,
            )
        port = server.add_insecure_port("127.0.0.1:0")
        if port == 0:
            sys.exit("grpc_server.py: could not listen on 127.0.0.1")
        server.start()
        sys.stdout.write(f"PORT {port}\n")
        sys.stdout.flush()

        signal.sigwait(STOP_SIGNALS)
        server.stop(0).wait()
        record.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
