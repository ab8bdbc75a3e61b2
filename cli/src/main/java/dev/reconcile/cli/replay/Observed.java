package dev.reconcile.cli.replay;

/**
 * What a replica holds for one key. Over HTTP a tombstone reads as absent ({@code null} instead of
 * an Observed).
 */
public record Observed(long version, long origin, byte[] value, boolean tombstone) {}
