"""User-visible text of the Models screen, in English and Simplified Chinese.

Same keys and the same {placeholders} in every table; the view takes a table as a
parameter. Names stay as they are (Keyframe, MNN, SHA-256, URL, Hugging Face,
ModelScope, Qwen3-VL). A {detail} is the program's own sentence (a file or
network error); a {size} or {rate} comes formatted with its unit (MB, GB).
"""

from __future__ import annotations

from app.core import durations

EN: dict[str, str] = {
    "models_title": "Models",
    "models_intro": (
        "The model Keyframe asks runs on this device. Downloads resume after a cut or a restart "
        "and every file is checked against its SHA-256 before it is used."
    ),
    # One card
    "kind_demo": "Demo model: trained on synthetic drawings only; its answers on real photographs mean nothing",
    "kind_pinned": "Pinned: every file is checked against its SHA-256",
    "kind_folder": "Your own folder: no pinned hashes",
    "badge_demo": "Demo",
    "badge_active": "In use",
    "licence": "Licence: {licence}",
    "licence_none": "Licence: not stated",
    "size_on_disk": "On disk: {size}",
    "size_to_download": "To download: {size}",
    "size_to_download_unknown": "To download: unknown size",
    "size_nothing_to_download": "Nothing to download",
    "size_about": "about {size}",
    "folder": "Folder: {folder}",
    "state_not_installed": "Not installed",
    "state_partial": "Partly downloaded: {percent} %",
    "state_partial_unknown": "Partly downloaded",
    "state_downloading": "Downloading: {percent} %",
    "state_downloading_unknown": "Downloading",
    "state_verifying": "Verifying: {percent} %",
    "state_installed": "Installed (checked by size and date; Verify re-hashes every file)",
    "state_verified": "Verified: every file matches its SHA-256",
    "state_failed": "Failed",
    "state_failed_files": "Failed: {files}",
    "failed_detail": "{detail}",
    "progress_bytes": "{done} of {total}",
    "progress_bytes_about": "{done} of about {total}",
    "progress_rate": "{rate}/s",
    "progress_eta": "{time} left",
    "progress_file": "file {index} of {count}: {file}",
    "progress_checking": "Checking the files already on this device…",
    "progress_waiting": "Waiting to try again: {detail}",
    "progress_hashing": "Re-hashing {file}",
    "stopping_pause": "Pausing…",
    "stopping_cancel": "Cancelling…",
    "stopping_stop": "Stopping…",
    **durations.ENGLISH,  # the CLI's progress line reads durations in the same words
    # Buttons
    "btn_download": "Download",
    "btn_resume": "Resume",
    "btn_retry": "Try again",
    "btn_repair": "Repair",
    "btn_pause": "Pause",
    "btn_cancel": "Cancel download",
    "btn_verify": "Verify",
    "btn_stop": "Stop",
    "btn_delete": "Delete",
    "btn_use": "Use this model",
    "confirm_delete": "Delete {name} from this device? {size} will be freed.",
    "confirm_cancel": "Cancel the download of {name} and delete what was downloaded so far?",
    "confirm_yes_delete": "Delete",
    "confirm_yes_cancel": "Cancel and delete",
    "confirm_no": "Keep",
    # Storage and download settings
    "storage_title": "Storage",
    "storage_folder": "Models are stored in {folder}",
    "storage_free": "Free space there: {size}",
    "storage_free_unknown": "Free space there: unknown",
    "mirror_title": "Download source",
    "mirror_label": "Mirror URL",
    "mirror_hint": "Empty: the models' own sources",
    "mirror_help": (
        "A company or local copy laid out as <URL>/<file path>. It replaces Hugging Face and ModelScope, "
        "never falls back to them, and every file is still checked against its SHA-256."
    ),
    "mirror_save": "Save mirror",
    "mirror_clear": "Clear mirror",
    "mirror_current": "Downloads come from {url}",
    "mirror_public": "Downloads come from each model's own sources (Hugging Face, then ModelScope)",
    "mirror_broken": (
        "The saved mirror setting cannot be used: {detail}. Nothing is downloaded until you save a mirror or clear it."
    ),
    "proxy_label": "Use the system's proxy settings",
    "proxy_help": (
        "Off (the default): Keyframe connects to the download server directly. "
        "On: downloads go through the proxy this system is set to use."
    ),
    # Notices from the controller
    "notice_not_usable": "{name} is not installed and verified yet",
    "notice_chosen": "Keyframe now uses {name}",
    "notice_failed": "That did not work: {detail}",
    "notice_bundled": "{name} comes with the app: there is nothing to download",
    "notice_mirror_broken": "The mirror setting cannot be used: {detail}",
    "notice_manifests_skipped": "A model description cannot be read, so its model is not offered: {detail}",
    "notice_mirror_invalid": "The mirror was not saved: {detail}",
    "notice_no_mirror": "{name} has no download source: set a mirror URL",
    "notice_downloading": "Downloading from {hosts}",
    "notice_paused": "{name} paused: Resume goes on from where it stopped, also after a restart",
    "notice_download_failed": (
        "The download failed: {detail}. Without a direct connection, set a mirror of your own or the "
        "system's proxy below."
    ),
    "notice_deleted": "{name} was deleted",
    "notice_nothing_deleted": "{name} was not installed: nothing was deleted",
    "notice_cancelled": "The download of {name} was cancelled and its files deleted",
    "notice_verify_stopped": "Verifying {name} was stopped",
    "notice_verified": "{name}: all {n} files match their SHA-256",
    "notice_downloaded": "{name} is downloaded: all {n} files match their SHA-256",
    "notice_verify_failed": "{name}: these files fail their SHA-256 check: {files}. Repair downloads only them.",
    "notice_mirror_saved": "Mirror saved: {url}",
    "notice_mirror_cleared": "Mirror cleared: downloads come from each model's own sources",
    "notice_proxy_on": "Downloads now use the system's proxy settings",
    "notice_proxy_off": "Downloads now connect directly",
    "notice_proxy_unusable": (
        "The system's proxy cannot be used: {detail}. Turn the proxy option off to connect directly."
    ),
    "dismiss": "Dismiss",
}

ZH: dict[str, str] = {
    "models_title": "模型",
    "models_intro": "Keyframe 使用的模型在本设备上运行。下载中断或重启后可继续，每个文件在使用前都会核对 SHA-256。",
    # One card
    "kind_demo": "演示模型：仅用合成图画训练，对真实照片的回答没有意义",
    "kind_pinned": "已固定：每个文件都核对 SHA-256",
    "kind_folder": "您自己的文件夹：没有固定的哈希值",
    "badge_demo": "演示",
    "badge_active": "使用中",
    "licence": "许可证：{licence}",
    "licence_none": "许可证：未注明",
    "size_on_disk": "占用空间：{size}",
    "size_to_download": "待下载：{size}",
    "size_to_download_unknown": "待下载：大小未知",
    "size_nothing_to_download": "无需下载",
    "size_about": "约 {size}",
    "folder": "文件夹：{folder}",
    "state_not_installed": "未安装",
    "state_partial": "已下载一部分：{percent} %",
    "state_partial_unknown": "已下载一部分",
    "state_downloading": "正在下载：{percent} %",
    "state_downloading_unknown": "正在下载",
    "state_verifying": "正在校验：{percent} %",
    "state_installed": "已安装（按大小和日期检查；“校验”会重新计算每个文件的哈希）",
    "state_verified": "已校验：每个文件都与其 SHA-256 一致",
    "state_failed": "失败",
    "state_failed_files": "失败：{files}",
    "failed_detail": "{detail}",
    "progress_bytes": "{done} / {total}",
    "progress_bytes_about": "{done} / 约 {total}",
    "progress_rate": "{rate}/秒",
    "progress_eta": "剩余 {time}",
    "progress_file": "第 {index} 个文件，共 {count} 个：{file}",
    "progress_checking": "正在检查本设备上已有的文件…",
    "progress_waiting": "等待重试：{detail}",
    "progress_hashing": "正在重新计算 {file} 的哈希",
    "stopping_pause": "正在暂停…",
    "stopping_cancel": "正在取消…",
    "stopping_stop": "正在停止…",
    "duration_s": "{s} 秒",
    "duration_m": "{m} 分 {s} 秒",
    "duration_h": "{h} 小时 {m} 分",
    # Buttons
    "btn_download": "下载",
    "btn_resume": "继续下载",
    "btn_retry": "重试",
    "btn_repair": "修复",
    "btn_pause": "暂停",
    "btn_cancel": "取消下载",
    "btn_verify": "校验",
    "btn_stop": "停止",
    "btn_delete": "删除",
    "btn_use": "使用此模型",
    "confirm_delete": "要从本设备删除 {name} 吗？将释放 {size}。",
    "confirm_cancel": "要取消 {name} 的下载并删除已下载的部分吗？",
    "confirm_yes_delete": "删除",
    "confirm_yes_cancel": "取消并删除",
    "confirm_no": "保留",
    # Storage and download settings
    "storage_title": "存储",
    "storage_folder": "模型存放在 {folder}",
    "storage_free": "该位置的可用空间：{size}",
    "storage_free_unknown": "该位置的可用空间：未知",
    "mirror_title": "下载来源",
    "mirror_label": "镜像 URL",
    "mirror_hint": "留空：使用模型自身的来源",
    "mirror_help": (
        "公司或本地的副本，文件位于 <URL>/<文件路径>。它会取代 Hugging Face 和 ModelScope，"
        "绝不会退回到它们，而且每个文件仍会核对 SHA-256。"
    ),
    "mirror_save": "保存镜像",
    "mirror_clear": "清除镜像",
    "mirror_current": "从 {url} 下载",
    "mirror_public": "从各模型自身的来源下载（先 Hugging Face，再 ModelScope）",
    "mirror_broken": "已保存的镜像设置无法使用：{detail}。在您保存新的镜像或清除它之前，不会下载任何内容。",
    "proxy_label": "使用系统的代理设置",
    "proxy_help": "关闭（默认）：Keyframe 直接连接下载服务器。开启：下载通过本系统设置的代理进行。",
    # Notices from the controller
    "notice_not_usable": "{name} 尚未安装并校验",
    "notice_chosen": "Keyframe 现在使用 {name}",
    "notice_failed": "操作未成功：{detail}",
    "notice_bundled": "{name} 随应用提供，无需下载",
    "notice_mirror_broken": "镜像设置无法使用：{detail}",
    "notice_manifests_skipped": "无法读取某个模型的描述文件，因此不提供该模型：{detail}",
    "notice_mirror_invalid": "镜像未保存：{detail}",
    "notice_no_mirror": "{name} 没有下载来源：请设置镜像 URL",
    "notice_downloading": "正在从 {hosts} 下载",
    "notice_paused": "{name} 已暂停：“继续下载”会从中断处继续，重启后也可以",
    "notice_download_failed": "下载失败：{detail}。如果不能直接连接，请在下方设置你自己的镜像或使用系统代理。",
    "notice_deleted": "{name} 已删除",
    "notice_nothing_deleted": "{name} 未安装，没有删除任何内容",
    "notice_cancelled": "{name} 的下载已取消，其文件已删除",
    "notice_verify_stopped": "已停止校验 {name}",
    "notice_verified": "{name}：全部 {n} 个文件都与其 SHA-256 一致",
    "notice_downloaded": "{name} 已下载：全部 {n} 个文件都与其 SHA-256 一致",
    "notice_verify_failed": "{name}：以下文件未通过 SHA-256 校验：{files}。“修复”只会重新下载这些文件。",
    "notice_mirror_saved": "镜像已保存：{url}",
    "notice_mirror_cleared": "镜像已清除：从各模型自身的来源下载",
    "notice_proxy_on": "下载现在使用系统的代理设置",
    "notice_proxy_off": "下载现在直接连接",
    "notice_proxy_unusable": "无法使用系统的代理：{detail}。关闭代理选项即可直接连接。",
    "dismiss": "关闭",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
