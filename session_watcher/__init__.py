"""session_watcher"""
