package io.fastblock.gateway.client;

import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.protocol.Extents;
import java.util.List;

/** Turns the allocated ranges of a chunk into the mapped / deallocated runs GET LBA STATUS reports. */
public final class ProvisioningMap {
    private ProvisioningMap() {
    }

    /**
     * The runs covering volume bytes {@code [from, to)} of the chunk starting at volume byte
     * {@code chunkStart}, whose allocated ranges (chunk offsets) are {@code allocated}; appended to
     * {@code out}, merged with its last run when of the same kind and adjacent.
     */
    public static void append(List<BlockDevice.Extent> out, long chunkStart, long from, long to, Extents allocated) {
        long pos = from;
        for (Extents.Range r : allocated.ranges()) {
            long a = Math.max(chunkStart + r.offset(), pos);
            long b = Math.min(chunkStart + r.end(), to);
            if (b <= a) {
                continue;
            }
            add(out, pos, a, false);
            add(out, a, b, true);
            pos = b;
        }
        add(out, pos, to, false);
    }

    /** Appends {@code [from, to)} as one run of {@code mapped} kind (nothing when empty). */
    public static void add(List<BlockDevice.Extent> out, long from, long to, boolean mapped) {
        if (to <= from) {
            return;
        }
        if (!out.isEmpty()) {
            BlockDevice.Extent last = out.get(out.size() - 1);
            if (last.mapped() == mapped && last.offset() + last.length() == from) {
                out.set(out.size() - 1, new BlockDevice.Extent(last.offset(), to - last.offset(), mapped));
                return;
            }
        }
        out.add(new BlockDevice.Extent(from, to - from, mapped));
    }

}
