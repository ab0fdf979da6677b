"""How a test server of this folder says it serves: its port written to DIR/NAME.port, last (a
port file means it serves), then it serves until it is stopped."""
import os


def serve_announced(server, directory, name):
    tmp = os.path.join(directory, name + ".port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(directory, name + ".port"))
    server.serve_forever()
