package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LocalClusterConfigTest {
    @Test
    void storageServersGetAJvmEachUnlessTold() {
        assertFalse(LocalClusterConfig.fromArgs().sharedStorageJvm());
        assertFalse(LocalClusterConfig.fromArgs("--storage-jvm=separate").sharedStorageJvm());
        assertTrue(LocalClusterConfig.fromArgs("--storage-jvm=shared").sharedStorageJvm());
    }

    @Test
    void anUnknownStorageJvmLayoutIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LocalClusterConfig.fromArgs("--storage-jvm=one"));
        assertTrue(e.getMessage().startsWith("--storage-jvm must be separate"), e.getMessage());
        assertTrue(e.getMessage().endsWith("got one"), e.getMessage());
    }

    @Test
    void theSharedJvmHasTheHeapOfAllItsServers() {
        assertEquals("768m", LocalClusterConfig.fromArgs("--storage-jvm=shared").storageGroupHeap());
        assertEquals("5G", LocalClusterConfig.fromArgs("--storage-jvm=shared", "--child-heap=1G", "--storage-count=5")
                .storageGroupHeap());
        assertEquals("3145728", LocalClusterConfig.fromArgs("--storage-jvm=shared", "--child-heap=1048576").storageGroupHeap());
    }

    @Test
    void aHeapTheSharedJvmCannotScaleIsRefusedUpFront() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LocalClusterConfig.fromArgs("--storage-jvm=shared", "--child-heap=half"));
        assertEquals("--child-heap must be a JVM heap size such as 256m, got half", e.getMessage());
        // Separate JVMs take the flag as it is, as before.
        assertEquals("half", LocalClusterConfig.fromArgs("--child-heap=half").childHeap());
    }

    @Test
    void helpDescribesEveryFlagTheParseReadsAndNoOther() {
        assertEquals("", io.fastblock.protocol.config.CommandLine.helpMismatch(LocalClusterConfig::from, LocalClusterConfig.FLAGS));
    }
}
