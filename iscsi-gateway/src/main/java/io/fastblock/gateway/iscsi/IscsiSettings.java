package io.fastblock.gateway.iscsi;

import java.time.Duration;

/**
 * Timers of the iSCSI layer, with defaults that suit open-iscsi and QEMU.
 *
 * @param loginTimeout  a connection that has not finished its login by then is closed (LIO: 15 s)
 * @param nopInterval   idle time after which the target pings the initiator with a NOP-In
 * @param nopTimeout    how long the target waits for the answering NOP-Out (or any PDU) before it
 *                      declares the initiator dead and closes the connection
 * @param logoutGrace   how long {@link IscsiServer#close()} waits for initiators to log out after
 *                      the asynchronous logout request, before it closes what is left
 * @param abortWait     how long a task management function waits for aborted commands' backend I/O
 *                      before it fences them and answers (well inside Linux's 15 s abort timer)
 */
public record IscsiSettings(Duration loginTimeout, Duration nopInterval, Duration nopTimeout, Duration logoutGrace,
                            Duration abortWait) {
    public static final IscsiSettings DEFAULTS = new IscsiSettings(Duration.ofSeconds(15), Duration.ofSeconds(10),
            Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofSeconds(5));

    /** These settings with the keepalive timers {@code interval} and {@code timeout}. */
    public IscsiSettings withNop(Duration interval, Duration timeout) {
        return new IscsiSettings(loginTimeout, interval, timeout, logoutGrace, abortWait);
    }

    public IscsiSettings {
        if (loginTimeout.isNegative() || loginTimeout.isZero() || nopInterval.isNegative() || nopInterval.isZero()
                || nopTimeout.isNegative() || nopTimeout.isZero() || logoutGrace.isNegative() || abortWait.isNegative()) {
            throw new IllegalArgumentException("iSCSI timers must be positive");
        }
    }
}
