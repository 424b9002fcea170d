"""Front ends, one folder per audience, each running the one engine: :mod:`.students`, :mod:`.hosted`,
:mod:`.instructors`; shared: :mod:`.commands`, :mod:`.reports`, :mod:`.finder`, :mod:`.fingerprint`.
Sandbox and core never import this package."""
