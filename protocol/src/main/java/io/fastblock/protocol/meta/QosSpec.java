package io.fastblock.protocol.meta;

/**
 * A volume's QoS limits as Cinder expresses them (front-end QoS specs): per second, 0 meaning
 * "no limit". Total limits cover reads and writes together; a read or write limit caps that
 * direction alone.
 */
public record QosSpec(long totalIopsSec, long readIopsSec, long writeIopsSec,
                      long totalBytesSec, long readBytesSec, long writeBytesSec) {
    public static final QosSpec UNLIMITED = new QosSpec(0, 0, 0, 0, 0, 0);

    public QosSpec {
        if (totalIopsSec < 0 || readIopsSec < 0 || writeIopsSec < 0 || totalBytesSec < 0 || readBytesSec < 0
                || writeBytesSec < 0) {
            throw new IllegalArgumentException("QoS limits must be >= 0 (0 = unlimited)");
        }
    }

    public boolean unlimited() {
        return equals(UNLIMITED);
    }
}
