"""How a test server of this folder says it serves: its port written to DIR/NAME.port, last (a
port file means it serves), then it serves until it is stopped; and how a bench's server ends by
itself (exit_with_parent)."""
import os
import threading
import time


def serve_announced(server, directory, name):
    tmp = os.path.join(directory, name + ".port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(directory, name + ".port"))
    server.serve_forever()


def exit_with_parent(max_seconds):
    """Ends the process after max_seconds, or as soon as the process that started it is gone, so
    no server is left running after a bench that died."""
    parent = os.getppid()

    def watch():
        deadline = time.monotonic() + max_seconds
        while time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
