"""notifier"""
