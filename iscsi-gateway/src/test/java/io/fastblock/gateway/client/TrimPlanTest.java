package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.gateway.client.TrimPlan.Piece;
import io.fastblock.gateway.scsi.BlockDevice.Extent;
import io.fastblock.protocol.Extents;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrimPlanTest {
    @Test
    void wholeBlocksAreTrimmedAndPartialEndsZeroWritten() {
        assertEquals(List.of(new Piece(0, 8192, true)), TrimPlan.of(0, 8192));
        assertEquals(List.of(new Piece(512, 3584, false), new Piece(4096, 4096, true), new Piece(8192, 1024, false)),
                TrimPlan.of(512, 8704));
        assertEquals(List.of(new Piece(4096, 4096, true), new Piece(8192, 512, false)), TrimPlan.of(4096, 4608));
        assertEquals(List.of(new Piece(3584, 512, false), new Piece(4096, 4096, true)), TrimPlan.of(3584, 4608));
    }

    @Test
    void rangesWithoutAWholeBlockAreOnlyZeroWritten() {
        assertEquals(List.of(new Piece(512, 1024, false)), TrimPlan.of(512, 1024));
        assertEquals(List.of(new Piece(3584, 1024, false)), TrimPlan.of(3584, 1024), "across a block edge, no whole block");
        assertEquals(List.of(), TrimPlan.of(4096, 0));
    }

    @Test
    void allocatedRangesBecomeMappedAndDeallocatedRuns() {
        List<Extent> out = new ArrayList<>();
        ProvisioningMap.add(out, 0, 1 << 20, false); // an unallocated chunk before
        Extents allocated = Extents.of(List.of(new Extents.Range(0, 4096), new Extents.Range(65536, 8192)));
        ProvisioningMap.append(out, 1 << 20, 1 << 20, 2 << 20, allocated);
        assertEquals(List.of(new Extent(0, (1 << 20), false), new Extent(1 << 20, 4096, true),
                new Extent((1 << 20) + 4096, 65536 - 4096, false), new Extent((1 << 20) + 65536, 8192, true),
                new Extent((1 << 20) + 65536 + 8192, (1 << 20) - 65536 - 8192, false)), out);
        List<Extent> mid = new ArrayList<>();
        ProvisioningMap.append(mid, 0, 6000, 70000, allocated); // starting inside the first extent
        assertEquals(new Extent(6000, 65536 - 6000, false), mid.get(0));
        assertEquals(new Extent(65536, 70000 - 65536, true), mid.get(1));
    }
}
