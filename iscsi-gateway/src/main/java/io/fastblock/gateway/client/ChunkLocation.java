package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Answer of a chunk lookup or allocation: {@code group} is null when the chunk is not allocated. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ChunkLocation(long index, boolean allocated, GroupInfo group) {
}
