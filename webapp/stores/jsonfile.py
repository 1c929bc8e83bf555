"""One JSON file shared by several processes: locked read-modify-write, atomic replace, cached reads.

How a write works (ARCHITECTURE.md, "One write, from a click to the disk"): take the sidecar ``<file>.lock`` and make sure the lock held
is the file at that path (``locking.SidecarLock``), read the file afresh, change the data,
validate it, write a temp file in the same folder (write, fsync); then, under a short lock on
the folder, verify the data file is still the one read (a program that does not know the lock,
or a writer let in by a deleted lock file, may have replaced it: then read again and re-apply),
append the history entry (written ahead), keep the previous version as ``<file>.bak``,
``os.replace``; fsync the folder; release the lock. Readers never take the lock and never
re-parse a file whose bytes have not changed.

Speed without changing a byte on disk (``jsonbytes``): under the lock the file is read afresh
and its bytes compared with the cached parse, which is reused only when they are identical; a
store that says how to copy its document (``copy=``) then also reuses the encoded form of every
item it did not replace, so a write encodes and validates only what changed. A change function
that changes a cached item in place instead of replacing it cannot lose the change: before
the bytes are written they are checked (as fast as orjson writes them) to be the encoding of
the document as it is, and when they are not every item is encoded and validated anew; a
change function that fails or changes nothing leaves no changed item in the cache.

``JsonFile`` is put together from its halves: ``jsonread.FileReader`` (the cached parse, views
and item views) and ``jsonwrite.FileWriter`` (``update``, the spliced encoding and its check,
the atomic replace); this module adds what keeps the file usable: ``ensure`` (create, remove a
dead writer's temp files, bring the format up to date) and ``repair``.

The other parts of the file layer: ``jsonparse`` (every parse bounded: nesting depth, number
size), ``atomic`` (temp file, fsync, replace, backup), ``setaside`` (records a store cannot use
go, bytes intact, to ``<file>.rejected-<stamp>``; ``repair`` starts from ``<file>.bak`` and
replays the history log's newer entries) and ``changes`` (what a change function returns).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..plainfiles import read_regular
from .atomic import fsync_dir, temp_files_of, write_atomic
from .errors import StoreCorruptError, StoreFormatNewerError, StoreFormatUnreadableError
from .jsonbytes import encode
from .jsonparse import has_surrogate_escape, parse_bytes_as_is, without_lone_surrogates
from .jsonread import RACY_NS
from .jsonwrite import FileWriter
from .setaside import RepairReport, free_path

log = logging.getLogger(__name__)

# Replaying history onto the backup starts this long before the backup was written: entries
# of that moment are applied again, which changes nothing when they are already in it.
REPLAY_SLACK_NS = RACY_NS


class JsonFile(FileWriter):
    """A JSON document on disk that several processes read and change safely.

    ``validate`` checks the document's shape (a problem makes the file damaged);
    ``item_problem`` checks one item of an array document (an unusable item is set aside
    and the rest kept); ``replay`` (data, since_ns) re-applies the history log's entries
    newer than ``since_ns`` (all when None) to ``data`` in place and returns how many
    records it changed, for ``repair``. Reading is ``jsonread.FileReader``'s, writing
    ``jsonwrite.FileWriter``'s; creating and repairing the file are this class's.
    """

    def ensure(self) -> None:
        """Create the folder and, if missing, the file with the default document; check it parses.

        Also removes temp files a killed writer left behind (safe: temps exist only under the lock).
        Then brings the file to this release's format (``upgrade``); a file in a newer format,
        or whose format sidecar cannot be read, is left as it is (read only: writes say why).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or temp_files_of(self.path) or not self.format.settled():
            with self.locked():
                self._remove_stale_temps()
                try:
                    self.upgrade()
                except (StoreFormatNewerError, StoreFormatUnreadableError) as exc:
                    log.warning("%s", exc)
                else:
                    if not self.path.exists() and not self.path.is_symlink():
                        write_atomic(self.path, encode(self._default()))
        self.read()

    def repair(self) -> Path | None:
        """Set a damaged file aside (bytes intact), start from the backup and replay history.

        Returns the quarantine path, or None when the whole file was not set aside.
        """
        return self.repair_report().quarantine

    def repair_report(self) -> RepairReport:
        """Repair the file and say what was done (see ``RepairReport``).

        A file with a few unusable records keeps the usable ones (the others are set aside);
        a damaged file is set aside whole, and the store starts again from ``<file>.bak``
        (else empty) with the history log's newer entries replayed on top.
        A file in a format newer than this release knows, or whose format sidecar cannot be
        read, is left as it is (``report.format_problem`` says why); any other is brought to
        this release's format afterwards (``upgrade``).
        """
        report = RepairReport(self.path)
        with self.locked():
            self._refuse_symlink()
            report.unfinished = self._remove_stale_temps()
            try:
                self.format.writable()
            except (StoreFormatNewerError, StoreFormatUnreadableError) as exc:
                report.format_problem = exc
                return report
            self._repair_locked(report)
            report.migrated = self.upgrade()
            report.format = self.format.state().describe()
        return report

    def _repair_locked(self, report: RepairReport) -> None:
        try:
            read = self._read_under_lock()
        except StoreCorruptError:
            pass
        else:
            report.surrogates = self._lone_surrogates_on_disk()
            if read.rejected:
                report.rejected = len(read.rejected)
                report.rejected_path = self._set_aside(read.rejected)
            if read.rejected or report.surrogates:
                self.write_locked(read.data)  # (read with U+FFFD for each lone surrogate)
            self._note_times(report, read.data)
            return
        report.quarantine = free_path(self.path, "corrupt")
        try:
            # A link keeps a file at the path at every moment; replace is the fallback
            # for filesystems without hard links.
            os.link(self.path, report.quarantine)
        except OSError:
            os.replace(self.path, report.quarantine)
        fsync_dir(self.path.parent)
        restored, since = self._default(), None
        report.source = "an empty store"
        try:
            restored = self._parse(read_regular(self.backup_path), self.backup_path)
            since = os.stat(self.backup_path).st_mtime_ns - REPLAY_SLACK_NS
            report.source = "the last good backup"
        except (OSError, StoreCorruptError):
            pass
        if self.replay is not None:
            report.replayed = self.replay(restored, since)
        write_atomic(self.path, self.encode_valid(restored)[0])
        self._note_times(report, restored)

    def _lone_surrogates_on_disk(self) -> int:
        """How many texts of the file (as it is on disk) hold a lone surrogate."""
        try:
            raw = read_regular(self.path)
            return (
                without_lone_surrogates(parse_bytes_as_is(raw, self.path))[1]
                if has_surrogate_escape(raw)
                else 0
            )
        except (OSError, StoreCorruptError):
            return 0

    def _note_times(self, report: RepairReport, data: Any) -> None:
        if self._unreadable_times is not None:
            report.unreadable_times = self._unreadable_times(data)
