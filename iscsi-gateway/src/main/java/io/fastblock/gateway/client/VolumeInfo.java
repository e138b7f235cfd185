package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** A volume as the namenode describes it ({@code GET /v1/volumes/{name}}). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VolumeInfo(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                         String createdAt, long allocatedChunks) {

    /** Number of chunks covering the volume (the last one may be partly beyond the end). */
    public long chunkCount() {
        return (size + chunkSize - 1) / chunkSize;
    }
}
