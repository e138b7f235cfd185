package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

class BufferLeakDetectionTest {
    @Test
    void offByDefaultAndAnExplicitLevelWins() {
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        String property = System.getProperty(BufferLeakDetection.PROPERTY);
        try {
            System.clearProperty(BufferLeakDetection.PROPERTY);
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
            assertEquals(ResourceLeakDetector.Level.DISABLED, BufferLeakDetection.serverDefault());

            System.setProperty(BufferLeakDetection.PROPERTY, "paranoid");
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
            assertEquals(ResourceLeakDetector.Level.PARANOID, BufferLeakDetection.serverDefault());
        } finally {
            if (property == null) {
                System.clearProperty(BufferLeakDetection.PROPERTY);
            } else {
                System.setProperty(BufferLeakDetection.PROPERTY, property);
            }
            ResourceLeakDetector.setLevel(before);
        }
    }
}
