"""The total size of the worker's scratch folder, the only place it may write."""

from __future__ import annotations

import contextlib
import os
import threading

SCRATCH_MOST_ENTRIES = 10_000  # past this it counts as full: counting more would cost the grader


def scratch_usage(folder: str, stop_above: int, most_entries: int = SCRATCH_MOST_ENTRIES) -> int | None:
    """Bytes the files beneath ``folder`` take on disk, counted until past ``stop_above``; ``None``
    for a tree of more than ``most_entries`` entries."""
    total, entries, folders = 0, 0, [folder]
    while folders and total <= stop_above:
        try:
            with os.scandir(folders.pop()) as found:
                for entry in found:
                    entries += 1
                    if entries > most_entries:
                        return None
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    # st_blocks: what the file takes on disk (a sparse file of 0 blocks takes none)
                    total += info.st_blocks * 512 if hasattr(info, "st_blocks") else info.st_size
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
        except OSError:
            continue
    return total


class ScratchWatch:
    """A thread that measures the folder four times a second and, past the limit, calls ``over(why)``
    (RLIMIT_FSIZE bounds each file, this all of them; docs/security.md: Known limits)."""

    def __init__(self, folder: str, limit: int, over, every: float = 0.25):
        self.folder, self.limit, self.over, self.every = folder, limit, over, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="autograder-scratch-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            used = scratch_usage(self.folder, self.limit)
            if used is None:
                self.over(f"the submission wrote more than {SCRATCH_MOST_ENTRIES} files (the limit of its "
                          "scratch folder); they were removed")
            elif used > self.limit:
                self.over(f"the submission wrote more than {self.limit / 2**30:g} GiB of files (the limit of "
                          "its scratch folder); they were removed")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def empty_folder(folder: str) -> None:
    """Remove what the submission wrote into its scratch folder (the folder stays)."""
    import shutil

    for entry in list(os.scandir(folder)) if os.path.isdir(folder) else []:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
