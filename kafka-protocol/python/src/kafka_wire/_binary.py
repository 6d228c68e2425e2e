"""Where the ``kafka-protocol`` binary of this package is.

The wheel installs it into the environment's scripts folder (``bin`` on
Unix, ``Scripts`` on Windows), beside ``pip``; nothing is ever downloaded.
"""

from __future__ import annotations

import os
import sys
import sysconfig

BINARY_NAME = "kafka-protocol" + (".exe" if sys.platform == "win32" else "")

#: Overrides the binary (a development build, say): a path to an executable.
ENV_BINARY = "KAFKA_WIRE_BINARY"


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _candidates() -> list[str]:
    places = [sysconfig.get_path("scripts")]
    # `pip install --user`
    try:
        places.append(sysconfig.get_path("scripts", scheme=_user_scheme()))
    except KeyError:  # no user scheme on this platform
        pass
    # `pip install --target DIR`: DIR/bin beside DIR/kafka_wire.
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    places.append(os.path.join(package_parent, "bin"))
    places.append(os.path.join(package_parent, "Scripts"))
    return [os.path.join(place, BINARY_NAME) for place in places if place]


def find_kafka_protocol() -> str:
    """The path of the ``kafka-protocol`` binary installed with this package.

    ``KAFKA_WIRE_BINARY``, when set, names it instead. Raises
    :class:`FileNotFoundError`, naming the places looked in, when it is
    nowhere.
    """
    override = os.environ.get(ENV_BINARY)
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        raise FileNotFoundError(f"{ENV_BINARY}={override} is not an executable file")
    looked = _candidates()
    for path in looked:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        f"the {BINARY_NAME} binary of the kafka-wire package is not installed; looked in: "
        + ", ".join(looked)
    )
