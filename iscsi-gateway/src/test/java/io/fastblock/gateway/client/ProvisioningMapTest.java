package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.gateway.scsi.BlockDevice.Extent;
import io.fastblock.protocol.Extents;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProvisioningMapTest {
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
