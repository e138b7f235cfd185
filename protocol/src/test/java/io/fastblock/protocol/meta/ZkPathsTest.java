package io.fastblock.protocol.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ZkPathsTest {
    @Test
    void groupNamesAreTheZeroPaddedIdsTheNamenodeWrites() {
        // The namenode and older servers name groups with String.format("%010d"): same names, any id.
        for (int id : new int[]{0, 1, 9, 10, 42, 99_999, 123_456_789, 999_999_999, 1_000_000_000, Integer.MAX_VALUE,
                -1, Integer.MIN_VALUE}) {
            assertEquals(String.format("%010d", id), ZkPaths.groupName(id), "group " + id);
            assertEquals(ZkPaths.GROUPS + "/" + String.format("%010d", id), ZkPaths.group(id), "group " + id);
        }
    }
}
