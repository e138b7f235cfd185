package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ByteRateLimiterTest {
    @Test
    void asynchronousCallersAreToldToWaitForTheirShareOfOneBudget() {
        ByteRateLimiter l = new ByteRateLimiter(1 << 20);
        long first = l.delayNanos(1 << 20);
        long second = l.delayNanos(1 << 20);
        // A MiB at a MiB per second is due one second after the window opened, the next one second later.
        assertTrue(first > TimeUnit.MILLISECONDS.toNanos(900) && first <= TimeUnit.SECONDS.toNanos(1), "first " + first);
        assertTrue(second > TimeUnit.MILLISECONDS.toNanos(1900) && second <= TimeUnit.SECONDS.toNanos(2), "second " + second);
    }

    @Test
    void zeroMeansUnlimited() {
        ByteRateLimiter l = new ByteRateLimiter(0);
        assertEquals(0, l.delayNanos(Long.MAX_VALUE / 2));
    }
}
