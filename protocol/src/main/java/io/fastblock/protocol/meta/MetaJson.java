package io.fastblock.protocol.meta;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;

/** JSON encoding of the metadata records stored in ZooKeeper. Unknown fields are ignored so newer writers stay readable. */
public final class MetaJson {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private MetaJson() {
    }

    public static byte[] write(Object record) {
        try {
            return MAPPER.writeValueAsBytes(record);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static <T> T read(byte[] bytes, Class<T> type) {
        try {
            return MAPPER.readValue(bytes, type);
        } catch (IOException e) {
            throw new UncheckedIOException("bad " + type.getSimpleName() + " record", e);
        }
    }
}
