package dev.millrace.bench;

public final class BenchMain {
    public static void main(String[] args) {
    }
}
