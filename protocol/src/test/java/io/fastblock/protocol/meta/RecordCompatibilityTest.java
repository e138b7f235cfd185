package io.fastblock.protocol.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Records written by older code read back with the new fields at their defaults, and new records round-trip. */
class RecordCompatibilityTest {
    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void oldNodeRecordHasNoLabelsAndIsItsOwnDomain() {
        NodeRecord n = MetaJson.read(json("{\"id\":\"s1\",\"host\":\"127.0.0.1\",\"port\":9401,"
                + "\"capacityBytes\":10,\"freeBytes\":5}"), NodeRecord.class);
        assertEquals(Map.of(), n.labels());
        assertEquals("node:s1", n.hostDomain());
        assertEquals("node:s1", n.rackDomain());
    }

    @Test
    void labelledNodeRoundTripsAndRackFallsBackToHost() {
        NodeRecord n = new NodeRecord("s1", "h", 1, 10, 5, Map.of(NodeRecord.LABEL_HOST, "hostA"));
        NodeRecord back = MetaJson.read(MetaJson.write(n), NodeRecord.class);
        assertEquals(n, back);
        assertEquals("hostA", back.hostDomain());
        assertEquals("hostA", back.rackDomain());
        NodeRecord racked = new NodeRecord("s2", "h", 1, 10, 5, Map.of("host", "hostB", "rack", "r1"));
        assertEquals("r1", MetaJson.read(MetaJson.write(racked), NodeRecord.class).rackDomain());
    }

    @Test
    void oldVolumeRecordReadsAsDefaultTenantUnlimited() {
        VolumeRecord v = MetaJson.read(json("{\"id\":3,\"name\":\"v\",\"size\":1024,\"blockSize\":512,"
                + "\"chunkSize\":1048576,\"state\":\"available\",\"createdAt\":\"2026-01-01T00:00:00Z\"}"),
                VolumeRecord.class);
        assertEquals(VolumeRecord.DEFAULT_TENANT, v.tenant());
        assertEquals(QosSpec.UNLIMITED, v.qos());
        assertNull(v.clientId());
        assertEquals(new VolumeRecord(3, "v", 1024, 512, 1048576, "available", "2026-01-01T00:00:00Z"), v);
    }

    @Test
    void fullVolumeRecordRoundTrips() {
        VolumeRecord v = new VolumeRecord(3, "v", 1024, 512, 1048576, "available", "t", "acme",
                new QosSpec(100, 0, 0, 1 << 20, 0, 0), "c-1");
        assertEquals(v, MetaJson.read(MetaJson.write(v), VolumeRecord.class));
    }

    @Test
    void oldGroupRecordHasNoJoiningNode() {
        GroupRecord g = MetaJson.read(json("{\"id\":1,\"chainVersion\":2,\"members\":[\"a\",\"b\",\"c\"]}"),
                GroupRecord.class);
        assertEquals(new GroupRecord(1, 2, List.of("a", "b", "c")), g);
    }

    @Test
    void exportsLeasesTenantsRoundTrip() {
        ExportRecord e = new ExportRecord("v", "iqn.1994-05.com.redhat:abc", "compute-1", "u", "s", null, null, "t");
        assertEquals(e, MetaJson.read(MetaJson.write(e), ExportRecord.class));
        LeaseRecord l = new LeaseRecord(7, "v", "gw-1", 3, 1000);
        assertEquals(l, MetaJson.read(MetaJson.write(l), LeaseRecord.class));
        TenantRecord t = new TenantRecord("acme", 200);
        assertEquals(t, MetaJson.read(MetaJson.write(t), TenantRecord.class));
        assertThrows(IllegalArgumentException.class, () -> new TenantRecord("x", 0));
        assertThrows(IllegalArgumentException.class, () -> new QosSpec(-1, 0, 0, 0, 0, 0));
    }

    @Test
    void exportPathsEncodeAnyInitiator() {
        String p = ZkPaths.export("v", "iqn.2026-11.io:a/b c");
        String child = p.substring(p.lastIndexOf('/') + 1);
        assertEquals("iqn.2026-11.io:a/b c", ZkPaths.initiatorOf(child));
        assertEquals("/fastblock/volumes/v/exports/*", ZkPaths.export("v", "*"));
    }
}
